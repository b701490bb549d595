// Header byte vectors from shared/reference/dw3000.md, and the bytes the driver really sends.
import XCTest
@testable import Drivers
import Protocol

final class DW3000HeaderTests: XCTestCase {
    func testReferenceVectors() {
        XCTAssertEqual(DW3000Header.read(.sysStatus), [0x41, 0x10])
        XCTAssertEqual(DW3000Header.write(.sysStatus), [0xC1, 0x10])
        XCTAssertEqual(DW3000Header.write(.sysCfg, access: .andOr32), [0xC0, 0x43])
        XCTAssertEqual(DW3000Header.read(.devID), [0x00])
        XCTAssertEqual(DW3000Header.write(.txBuffer), [0xA8])
        XCTAssertEqual(DW3000Header.read(.rxBuffer0), [0x24])
        // dw3000-ng always sends two bytes: SEQ_CTRL (11:08) plain write is E2 20.
        XCTAssertEqual(DW3000Header.encode(file: 0x11, offset: 0x08, write: true), [0xE2, 0x20])
        XCTAssertEqual(DW3000Header.encode(file: 0x00, offset: 0x00, write: false, forceFull: true), [0x40, 0x00])
        XCTAssertEqual(DW3000Header.write(.clkCtrl, access: .andOr8), [0xE2, 0x11])
        XCTAssertEqual(DW3000Header.write(.dtune0, access: .andOr16), [0xCC, 0x02])
    }

    func testFastCommandBytes() {
        let bytes = Dictionary(uniqueKeysWithValues: DW3000FastCommand.allCases.map { ($0, $0.byte) })
        XCTAssertEqual(bytes, [.txrxOff: 0x81, .tx: 0x83, .rx: 0x85, .delayedTX: 0x87, .txThenReceive: 0x99,
                               .delayedTXThenReceive: 0x9B, .clearIRQs: 0xA5])
    }

    func testDecodeRoundTripsAndRejectsNonsense() {
        for register in DW3000Register.all where register.offset < 0x80 {
            for write in [false, true] {
                let header = DW3000Header.encode(file: register.file, offset: register.offset, write: write)
                XCTAssertEqual(DW3000Header.decode(header),
                               .access(file: register.file, offset: register.offset, write: write, mode: .plain, headerLength: header.count))
            }
        }
        XCTAssertEqual(DW3000Header.decode([0xC0, 0x43]), .access(file: 0, offset: 0x10, write: true, mode: .andOr32, headerLength: 2))
        XCTAssertEqual(DW3000Header.decode([0x9B]), .fast(0x0D))
        XCTAssertNil(DW3000Header.decode([]))
        XCTAssertNil(DW3000Header.decode([0x41]))        // full header cut short
        XCTAssertNil(DW3000Header.decode([0x40, 0x43]))  // AND-OR is a write only
        XCTAssertNil(DW3000Header.decode([0x01]))        // a "fast command" without the write bit
    }

    func testDriverSendsTheseBytes() throws {
        let air = UWBFixture.air()
        let (chip, driver) = try UWBFixture.driver(on: air, name: "car")
        chip.clearTrace()
        let before = driver.counters
        try driver.clearStatus(DW3000Status.txFrameSent)
        try driver.modify(.sysCfg, .andOr32, and: ~UInt32(1 << 9), or: 1 << 9)
        try driver.command(.txrxOff)
        XCTAssertEqual(chip.trace.map(\.bytes), [
            [0xC1, 0x10, 0x80, 0x00, 0x00, 0x00],
            [0xC0, 0x43, 0xFF, 0xFD, 0xFF, 0xFF, 0x00, 0x02, 0x00, 0x00],
            [0x81],
        ])
        XCTAssertEqual(driver.counters.spiTransactions - before.spiTransactions, 3)
        XCTAssertEqual(driver.counters.spiBytesOut - before.spiBytesOut, 6 + 10 + 1)
        XCTAssertEqual(driver.counters.spiBytesIn - before.spiBytesIn, 0)
    }

    func testSimulatorRecordsMisuseInsteadOfCrashing() throws {
        let air = UWBFixture.air()
        let chip = air.addChip(name: "x")
        XCTAssertEqual(try chip.transfer(write: [0x41], readCount: 4), [0, 0, 0, 0])
        XCTAssertEqual(try chip.transfer(write: [0x40, 0x43, 1, 2], readCount: 0), [])
        XCTAssertEqual(try chip.transfer(write: [0xA8] + [UInt8](repeating: 1, count: 1100), readCount: 0), [])
        XCTAssertEqual(try chip.transfer(write: [0x41, 0xFC], readCount: 8).count, 8)  // 00:7F + 8 runs past
        XCTAssertEqual(try chip.transfer(write: [0x80, 1, 2, 3, 4], readCount: 0), [])   // DEV_ID is read-only
        XCTAssertEqual(try chip.transfer(write: [0xC0, 0x43, 1], readCount: 0), [])     // AND-OR missing mask bytes
        XCTAssertEqual(chip.protocolErrors.count, 6, "\(chip.protocolErrors)")
        XCTAssertEqual(LittleEndian.value(try chip.transfer(write: [0x00], readCount: 4), as: UInt32.self), 0xDECA_0302)
        chip.traceCapacity = 10
        for _ in 0..<25 { _ = try chip.transfer(write: [0x00], readCount: 4) }
        XCTAssertLessThanOrEqual(chip.trace.count, 10)
    }
}

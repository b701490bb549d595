// Bring-up against the simulated chip: the exact register sequence of the reference's init
// order, DEV_ID classification, and each failure as its typed error within bounded time.
import XCTest
@testable import Drivers
import Protocol

final class DW3000BringUpTests: XCTestCase {
    private func otpRead() -> [String] { ["W OTP_CFG", "W OTP_ADDR", "W OTP_CFG", "R OTP_RDATA"] }

    func testBringUpFollowsTheReferenceSequence() throws {
        let air = UWBFixture.air()
        let (chip, driver) = try UWBFixture.driver(on: air, name: "car")
        var expected: [String] = ["R DEV_ID", "AO CLK_CTRL", "W SOFT_RST", "R SYS_STATUS", "W SYS_STATUS"]
        for _ in 0..<6 { expected += otpRead() }
        expected += ["W XTAL"]
        expected += ["W SYS_CFG", "AO DTUNE0", "W STS_CFG0", "W DTUNE3", "W CHAN_CTRL", "W TX_FCTRL", "W FINE_PLEN"]
        expected += ["W TX_ANTD", "W CIA_CONF", "W TX_CTRL_HI", "W PLL_CFG"]
        expected += ["W SYS_STATUS", "AO SEQ_CTRL", "R SYS_STATUS", "R SYS_STATUS", "R SYS_STATUS"]
        expected += ["W RX_CAL", "R RX_CAL_STS", "R RX_CAL_STS", "W RX_CAL_STS", "W RX_CAL", "W SYS_ENABLE", "W SYS_STATUS"]
        XCTAssertEqual(chip.traceSummary, expected)
        // Everything before the PLL locked ran at the slow clock; the driver then went fast.
        XCTAssertTrue(chip.trace.allSatisfy { $0.clockHertz == 2_000_000 })
        XCTAssertEqual(chip.clockHertz, 20_000_000)
        // OTP addresses in the reference's order, and the blank XTRIM replaced by 0x2E.
        let addresses = chip.trace.filter { $0.target == "OTP_ADDR" }.map { Array($0.bytes.suffix(2)) }
        XCTAssertEqual(addresses, [[0x04, 0], [0x05, 0], [0x0A, 0], [0x20, 0], [0x1E, 0], [0x35, 0]])
        XCTAssertEqual(chip.trace.first { $0.target == "XTAL" }?.bytes, [0xD2, 0x50, 0x2E])
        XCTAssertEqual(driver.otp.ldoLow, 0x1234)
        // Register values: CHAN_CTRL ch5, SFD 3, codes 9; SYS_CFG CP_SPC=1 + CIA_STS; STS 64 symbols.
        XCTAssertEqual(chip.trace.first { $0.target == "CHAN_CTRL" }?.bytes.suffix(4), [0x4E, 0x09, 0x00, 0x00])
        XCTAssertEqual(chip.trace.first { $0.target == "SYS_CFG" }?.bytes.suffix(4), [0x00, 0x11, 0x00, 0x00])
        XCTAssertEqual(chip.trace.first { $0.target == "STS_CFG0" }?.bytes, [0x84, 0x07])
        XCTAssertEqual(chip.trace.first { $0.target == "TX_CTRL_HI" }?.bytes.suffix(4), [0x34, 0x11, 0x07, 0x1C])
        XCTAssertEqual(chip.trace.first { $0.target == "SEQ_CTRL" }?.bytes, [0xE2, 0x22, 0xFF, 0xFF, 0x00, 0x01])
        XCTAssertEqual(driver.chip, .dw3110)
        XCTAssertEqual(chip.resets, 1)
        // Bounded: the whole bring-up took under 2 ms of chip time.
        XCTAssertLessThan(air.nowPicoseconds, 2_000_000_000)
    }

    func testProgrammedXtalTrimAndChannel9() throws {
        let air = UWBFixture.air()
        let chip = air.addChip(name: "car")
        chip.otp[0x1E] = 0x25
        var configuration = DW3000Configuration()
        configuration.channel = .nine
        configuration.preambleCode = 10
        let driver = try DW3000Driver(spi: chip, configuration: configuration, delay: air.delay())
        try driver.bringUp()
        XCTAssertEqual(chip.trace.first { $0.target == "XTAL" }?.bytes, [0xD2, 0x50, 0x25])
        XCTAssertEqual(chip.trace.first { $0.target == "CHAN_CTRL" }?.bytes.suffix(4), [0x57, 0x0A, 0x00, 0x00])
        XCTAssertEqual(chip.trace.first { $0.target == "PLL_CFG" }?.bytes.suffix(2), [0x3C, 0x0F])
        XCTAssertEqual(driver.otp.xtalTrim, 0x25)
    }

    func testKnownDeviceIDsAreAcceptedAndNamed() throws {
        let names: [UInt32: String] = [0xDECA_0302: "DW3110 (C0)", 0xDECA_0312: "DW3120 (C0, PDoA)", 0xDECA_0303: "DW3110 (D0)",
                                       0xDECA_0313: "DW3120 (D0, PDoA)", 0xDECA_0304: "QM33110 (E0)", 0xDECA_0314: "QM33120 (E0, PDoA)"]
        for (id, name) in names {
            let air = UWBFixture.air()
            let chip = air.addChip(name: "car", chipID: id)
            let driver = try DW3000Driver(spi: chip, delay: air.delay())
            XCTAssertEqual(try driver.bringUp().rawValue, id)
            XCTAssertEqual("\(driver.chip!)", name)
            XCTAssertTrue(driver.snapshot.description.contains(name))
        }
    }

    func testUnknownDeviceIDIsRefusedWithItsValue() throws {
        let air = UWBFixture.air()
        let driver = try DW3000Driver(spi: air.addChip(name: "car", chipID: 0xDECA_0399), delay: air.delay())
        XCTAssertThrowsError(try driver.bringUp()) { error in
            XCTAssertEqual(error as? DW3000Error, .unknownDevice(id: 0xDECA_0399))
            XCTAssertTrue("\(error)".contains("0xDECA0399"), "\(error)")
        }
        XCTAssertNil(driver.chip)
        XCTAssertThrowsError(try driver.receive(timeoutMicros: 100)) { XCTAssertEqual($0 as? DW3000Error, .notReady) }
    }

    func testNoChipAnswering() throws {
        let air = UWBFixture.air()
        let chip = air.addChip(name: "car")
        chip.faults = [.noChip]
        let driver = try DW3000Driver(spi: chip, delay: air.delay())
        XCTAssertThrowsError(try driver.bringUp()) { error in
            XCTAssertEqual(error as? DW3000Error, .noChipAnswering(read: 0xFFFF_FFFF))
            XCTAssertTrue("\(error)".contains("no chip answering"), "\(error)")
            XCTAssertTrue("\(error)".contains("check wiring, chip select, SPI clock"), "\(error)")
        }
        XCTAssertThrowsError(try DW3000ChipID.identify(0)) { XCTAssertEqual($0 as? DW3000Error, .noChipAnswering(read: 0)) }
    }

    func testResetThatNeverCompletesFailsWithinBound() throws {
        let air = UWBFixture.air()
        let chip = air.addChip(name: "car")
        chip.faults = [.rcInitNeverSets]
        let driver = try DW3000Driver(spi: chip, delay: air.delay())
        XCTAssertThrowsError(try driver.bringUp()) { error in
            XCTAssertEqual(error as? DW3000Error, .resetDidNotComplete(polls: 20))
            XCTAssertTrue("\(error)".contains("RCINIT"), "\(error)")
        }
        XCTAssertEqual(chip.traceSummary.filter { $0 == "R SYS_STATUS" }.count, 20)
        XCTAssertEqual(air.nowPicoseconds, (1500 + 20 * 100) * 1_000_000)
    }

    func testPLLThatNeverLocksFailsWithinBound() throws {
        let air = UWBFixture.air()
        let chip = air.addChip(name: "car")
        chip.faults = [.pllNeverLocks]
        let driver = try DW3000Driver(spi: chip, delay: air.delay())
        let start = air.nowPicoseconds
        XCTAssertThrowsError(try driver.bringUp()) { error in
            XCTAssertEqual(error as? DW3000Error, .pllDidNotLock(polls: 50))
            XCTAssertTrue("\(error)".contains("PLL did not lock"), "\(error)")
        }
        XCTAssertEqual(air.nowPicoseconds - start, (1500 + 50 * 20) * 1_000_000)
        XCTAssertEqual(chip.clockHertz, 2_000_000, "the clock must stay slow without a PLL")
    }

    func testRXCalibrationThatNeverFinishes() throws {
        let air = UWBFixture.air()
        let chip = air.addChip(name: "car")
        chip.faults = [.rxCalibrationNeverFinishes]
        let driver = try DW3000Driver(spi: chip, delay: air.delay())
        XCTAssertThrowsError(try driver.bringUp()) { XCTAssertEqual($0 as? DW3000Error, .rxCalibrationTimedOut(polls: 50)) }
    }

    func testFastSPIBeforePLLLockReadsGarbage() throws {
        // The libdw1000 complaint: a fast clock before the PLL runs makes every read all ones.
        let air = UWBFixture.air()
        let chip = air.addChip(name: "car")
        try chip.setClock(hertz: 20_000_000)
        XCTAssertEqual(try chip.transfer(write: [0x00], readCount: 4), [0xFF, 0xFF, 0xFF, 0xFF])
        XCTAssertEqual(chip.protocolErrors.count, 1)
        XCTAssertTrue(chip.protocolErrors[0].contains("before PLL lock"))
        // And the driver refuses to be configured that way.
        var configuration = DW3000Configuration()
        configuration.slowSPIHertz = 8_000_000
        XCTAssertThrowsError(try DW3000Driver(spi: chip, configuration: configuration, delay: air.delay())) {
            XCTAssertTrue("\($0)".contains("at most 7 MHz"), "\($0)")
        }
    }

    func testConfigurationValidation() {
        var configuration = DW3000Configuration()
        configuration.sfdType = 2
        XCTAssertThrowsError(try configuration.validate()) {
            XCTAssertEqual($0 as? DW3000Error, .invalidConfiguration("STS needs SFD type 3 (IEEE 802.15.4z)"))
        }
        configuration.stsEnabled = false
        XCTAssertNoThrow(try configuration.validate())
        configuration.preambleCode = 3
        XCTAssertThrowsError(try configuration.validate())
    }

    func testSnapshotForTheConsole() throws {
        let air = UWBFixture.air()
        let (_, driver) = try UWBFixture.driver(on: air, name: "car")
        let text = driver.snapshot.description
        for needle in ["DW3110 (C0)", "channel 5", "preamble code 9 length 128", "STS 64 symbols", "antenna delay TX 16385 RX 16385",
                       "XTAL trim 0x2E", "SPI 20000 kHz", "receive errors: none"] {
            XCTAssertTrue(text.contains(needle), "\(needle) missing from:\n\(text)")
        }
        XCTAssertEqual(driver.snapshot.counters.spiTransactions, 53)
    }
}

final class DW3000BoardConfigurationTests: XCTestCase {
    func testBoardValuesReachTheRegisters() throws {
        let board = BoardUWB(spidev: "/dev/spidev0.0", channel: 9, preambleCode: 11, stsLength: 128,
                             txAntennaDelay: 16450, rxAntennaDelay: 16440, spiHertz: 16_000_000)
        let configuration = DW3000Configuration(board: board)
        XCTAssertNoThrow(try configuration.validate())
        let air = UWBFixture.air()
        let (chip, driver) = try UWBFixture.driver(on: air, name: "car", configuration: configuration)
        XCTAssertEqual(chip.trace.first { $0.target == "TX_ANTD" }?.bytes, [0xC2, 0x10, 0x42, 0x40])
        XCTAssertEqual(chip.trace.first { $0.target == "CIA_CONF" }?.bytes, [0x9C, 0x38, 0x40])
        XCTAssertEqual(chip.trace.first { $0.target == "STS_CFG0" }?.bytes, [0x84, 0x0F])
        XCTAssertEqual(chip.clockHertz, 16_000_000)
        XCTAssertEqual(driver.snapshot.channel, .nine)
        XCTAssertEqual(driver.snapshot.stsLength, 128)
    }
}

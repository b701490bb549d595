// Transmission: delayed TX on the 512-DTU grid, late-TX detection and recovery, and timestamps
// across the 40-bit wrap.
import XCTest
@testable import Drivers
import Protocol

final class DW3000TransmitTests: XCTestCase {
    /// A transmitter and a receiver 1.5 m apart, no noise, no drift.
    private func pair(startUnits: UInt64 = 0) throws -> (SimulatedUWBAir, SimulatedDW3000, DW3000Driver, DW3000Driver) {
        let air = UWBFixture.air()
        let (txChip, tx) = try UWBFixture.driver(on: air, name: "a", startUnits: startUnits)
        let (_, rx) = try UWBFixture.driver(on: air, name: "b", startUnits: startUnits)
        return (air, txChip, tx, rx)
    }

    func testDelayedTransmissionLandsOnThe512UnitGrid() throws {
        let (air, chip, tx, rx) = try pair()
        try rx.receive(timeoutMicros: 5000)
        let at = chip.localTime.adding(units: UWBFixture.units(micros: 1000) + 300)
        XCTAssertEqual(try tx.transmit([1, 2, 3], at: at, thenReceiveTimeoutMicros: nil), [])
        XCTAssertEqual(chip.trace.last { $0.kind == .command }?.bytes, [0x87])
        let dx = chip.trace.last { $0.target == "DX_TIME" }!.bytes.suffix(4)
        XCTAssertEqual(LittleEndian.value(dx, as: UInt32.self), UInt32(at.rawValue >> 8))
        air.runUntilIdle()
        guard case .transmitted(let sent)? = try tx.serviceInterrupt().first else { return XCTFail("no TXFRS") }
        let expected = UWBTimestamp(((at.rawValue >> 8) & ~1) << 8 + 16385)
        XCTAssertEqual(sent, expected)
        XCTAssertEqual(sent, tx.transmitTime(at: at))
        XCTAssertLessThan(at.adding(units: 16385).units(since: sent), 512)
        guard case .received(let payload, let arrived, _, _)? = try rx.serviceInterrupt().first else { return XCTFail("no RXFCG") }
        XCTAssertEqual(payload, [1, 2, 3])
        // 1.5 m is 319.8 DTU of flight; both clocks start together without drift.
        XCTAssertEqual(Double(arrived.units(since: sent)), 1.5 / UWBTimestamp.metresPerUnit, accuracy: 1.5)
        XCTAssertEqual(tx.counters.framesSent, 1)
        XCTAssertEqual(rx.counters.framesReceived, 1)
    }

    func testLateDelayedTransmissionIsCancelledAndReported() throws {
        let (air, chip, tx, _) = try pair()
        air.advance(byMicros: 10_000)
        let past = UWBTimestamp(chip.localTime.rawValue &- UWBFixture.units(micros: 1000))
        chip.clearTrace()
        XCTAssertEqual(try tx.transmit([9], at: past, thenReceiveTimeoutMicros: 1000), [.transmitTooLate])
        XCTAssertEqual(chip.traceSummary.suffix(5), ["CMD delayedTXThenReceive", "R SYS_STATUS", "R SYS_STATE_LO", "CMD txrxOff", "W SYS_STATUS"])
        XCTAssertEqual(tx.counters.lateTransmits, 1)
        XCTAssertEqual(chip.sysStatus & DW3000Status.halfPeriodWarning, 0, "HPDWARN cleared")
        // Too close counts as late as well: the preamble (about 138 us) must fit before the RMARKER.
        XCTAssertEqual(try tx.transmit([9], at: chip.localTime.adding(units: UWBFixture.units(micros: 50)), thenReceiveTimeoutMicros: nil),
                       [.transmitTooLate])
        // The radio recovers: the next transmission goes out.
        XCTAssertEqual(try tx.transmit([9], at: chip.localTime.adding(units: UWBFixture.units(micros: 400)), thenReceiveTimeoutMicros: nil), [])
        air.runUntilIdle()
        XCTAssertEqual(try tx.serviceInterrupt().count, 1)
        XCTAssertEqual(tx.counters.lateTransmits, 2)
        XCTAssertEqual(chip.protocolErrors, [])
    }

    func testTimestampsAcrossThe40BitWrap() throws {
        // Both counters 300 us before the wrap; the frame leaves and arrives after it.
        let (air, chip, tx, rx) = try pair(startUnits: UWBTimestamp.modulus - UWBFixture.units(micros: 20_000))
        let toWrap = Double(UWBTimestamp.modulus - chip.localTime.rawValue) / UWBTimestamp.unitsPerMicrosecond
        air.advance(byMicros: toWrap - 300)
        let now = chip.localTime
        XCTAssertGreaterThan(now.rawValue, UWBTimestamp.modulus - UWBFixture.units(micros: 400))
        try rx.receive(timeoutMicros: 0)
        let at = now.adding(units: UWBFixture.units(micros: 600))
        XCTAssertLessThan(at.rawValue, now.rawValue, "the target itself wrapped")
        XCTAssertEqual(try tx.transmit([7], at: at, thenReceiveTimeoutMicros: nil), [])
        air.runUntilIdle()
        guard case .transmitted(let sent)? = try tx.serviceInterrupt().first,
              case .received(_, let arrived, _, _)? = try rx.serviceInterrupt().first else { return XCTFail("no frame") }
        XCTAssertLessThan(sent.rawValue, 1 << 30, "TX time is past the wrap")
        XCTAssertEqual(sent, tx.transmitTime(at: at))
        XCTAssertEqual(Double(arrived.units(since: sent)), 1.5 / UWBTimestamp.metresPerUnit, accuracy: 1.5)
        XCTAssertEqual(Double(sent.units(since: now)), Double(UWBFixture.units(micros: 600)) + 16385, accuracy: 512)
    }

    func testPayloadLimits() throws {
        let (_, _, tx, _) = try pair()
        XCTAssertThrowsError(try tx.transmit([UInt8](repeating: 0, count: 1022), at: nil, thenReceiveTimeoutMicros: nil)) {
            XCTAssertEqual($0 as? DW3000Error, .payloadTooLarge(1022))
        }
        XCTAssertNoThrow(try tx.transmit([UInt8](repeating: 0, count: 1021), at: nil, thenReceiveTimeoutMicros: nil))
    }
}

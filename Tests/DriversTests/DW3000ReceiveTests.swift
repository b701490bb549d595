// Reception: timeouts, error counting and the reset after N consecutive errors, and the STS
// verdict (matching keys valid, a wrong key or TOAST invalid).
import XCTest
@testable import Drivers
import Protocol

final class DW3000ReceiveTests: XCTestCase {
    func testReceiveTimeoutIsReportedAndCounted() throws {
        let air = UWBFixture.air()
        let (chip, driver) = try UWBFixture.driver(on: air, name: "car")
        let start = air.nowPicoseconds
        try driver.receive(timeoutMicros: 500)
        // 500 us is 487.5 UWB microseconds: rounded up to 488.
        XCTAssertEqual(chip.trace.first { $0.target == "RX_FWTO" }?.bytes.suffix(4), [0xE8, 0x01, 0x00, 0x00])
        XCTAssertFalse(chip.irqAsserted)
        air.runUntilIdle()
        XCTAssertTrue(chip.irqAsserted)
        XCTAssertEqual(Double(air.nowPicoseconds - start) / 1e6, 500, accuracy: 1)
        XCTAssertEqual(try driver.serviceInterrupt(), [.receiveTimeout])
        XCTAssertFalse(chip.irqAsserted, "handled bits cleared")
        XCTAssertEqual(try driver.serviceInterrupt(), [])
        XCTAssertEqual(driver.counters.receiveTimeouts, 1)
    }

    func testErrorsAreCountedByKindAndFiveInARowResetTheChip() throws {
        let air = UWBFixture.air()
        air.channel.frameErrorProbability = 1
        let (txChip, tx) = try UWBFixture.driver(on: air, name: "a")
        let (rxChip, rx) = try UWBFixture.driver(on: air, name: "b")
        rxChip.raiseStatus(DW3000Status.rxPHRError)
        XCTAssertEqual(try rx.serviceInterrupt(), [.receiveError("PHR")])
        for _ in 0..<4 {
            try rx.receive(timeoutMicros: 0)
            try tx.transmit([1], at: nil, thenReceiveTimeoutMicros: nil)
            air.runUntilIdle()
            _ = try tx.serviceInterrupt()
            XCTAssertEqual(try rx.serviceInterrupt(), [.receiveError("FCS")])
        }
        XCTAssertEqual(rx.counters.receiveErrors, ["PHR": 1, "FCS": 4])
        XCTAssertEqual(rx.counters.resets, 1)
        XCTAssertEqual(rxChip.resets, 2, "bring-up and the recovery")
        XCTAssertEqual(rx.chip, .dw3110, "reconfigured")
        XCTAssertEqual(rxChip.clockHertz, 20_000_000)
        XCTAssertEqual(rxChip.protocolErrors, [])
        XCTAssertEqual(txChip.protocolErrors, [])
        // A good frame resets the run.
        air.channel.frameErrorProbability = 0
        try rx.receive(timeoutMicros: 0)
        try tx.transmit([2], at: nil, thenReceiveTimeoutMicros: nil)
        air.runUntilIdle()
        guard case .received(let payload, _, _, _)? = try rx.serviceInterrupt().first else { return XCTFail("no frame") }
        XCTAssertEqual(payload, [2])
        XCTAssertEqual(rx.consecutiveErrors, 0)
        XCTAssertTrue(rx.snapshot.description.contains("receive errors: FCS 4, PHR 1"), rx.snapshot.description)
    }

    /// One frame from a to b with the given STS material on each side; b's event.
    private func exchange(senderKey: [UInt8], receiverKey: [UInt8], senderRound: UInt32 = 1, receiverRound: UInt32 = 1,
                          configuration: DW3000Configuration = DW3000Configuration(),
                          faults: Set<SimulatedDW3000.Fault> = []) throws -> (RangingEvent?, DW3000Driver) {
        let air = UWBFixture.air(seed: 7)
        let (_, tx) = try UWBFixture.driver(on: air, name: "a", configuration: configuration)
        let (rxChip, rx) = try UWBFixture.driver(on: air, name: "b", configuration: configuration)
        rxChip.faults = faults
        try tx.loadSTS(key: senderKey, iv: UWBFixture.iv(round: senderRound))
        try rx.loadSTS(key: receiverKey, iv: UWBFixture.iv(round: receiverRound))
        try rx.receive(timeoutMicros: 0)
        try tx.transmit([5], at: nil, thenReceiveTimeoutMicros: nil)
        air.runUntilIdle()
        return (try rx.serviceInterrupt().first, rx)
    }

    func testMatchingSTSIsValid() throws {
        guard case .received(_, _, let quality, let valid)? = try exchange(senderKey: UWBFixture.key, receiverKey: UWBFixture.key).0 else {
            return XCTFail("no frame")
        }
        XCTAssertTrue(valid)
        XCTAssertGreaterThanOrEqual(quality, 0.6)
    }

    func testWrongKeyOrIVGivesLowQualityAndInvalid() throws {
        let wrongKey = try exchange(senderKey: UWBFixture.key, receiverKey: Array(repeating: 0x55, count: 16))
        guard case .received(_, _, let quality, let valid)? = wrongKey.0 else { return XCTFail("no frame") }
        XCTAssertFalse(valid)
        XCTAssertLessThan(quality, 0.6)
        XCTAssertEqual(wrongKey.1.counters.stsInvalid, 1)
        guard case .received(_, _, _, let validIV)? = try exchange(senderKey: UWBFixture.key, receiverKey: UWBFixture.key,
                                                                   senderRound: 2, receiverRound: 3).0 else { return XCTFail("no frame") }
        XCTAssertFalse(validIV, "a stale round counter does not correlate")
    }

    func testTOASTMakesAFrameInvalid() throws {
        guard case .received(_, _, let quality, let valid)? = try exchange(senderKey: UWBFixture.key, receiverKey: UWBFixture.key,
                                                                           faults: [.toastSet]).0 else { return XCTFail("no frame") }
        XCTAssertGreaterThanOrEqual(quality, 0.6)
        XCTAssertFalse(valid)
    }

    func testWithoutSTSNothingIsVouchedFor() throws {
        var configuration = DW3000Configuration()
        configuration.stsEnabled = false
        guard case .received(_, _, let quality, let valid)? = try exchange(senderKey: UWBFixture.key, receiverKey: UWBFixture.key,
                                                                           configuration: configuration).0 else { return XCTFail("no frame") }
        XCTAssertEqual(quality, 0)
        XCTAssertFalse(valid)
    }

    func testTheIVCounterAdvancesPerFrameOnBothEnds() throws {
        let air = UWBFixture.air(seed: 8)
        let (_, tx) = try UWBFixture.driver(on: air, name: "a")
        let (_, rx) = try UWBFixture.driver(on: air, name: "b")
        try tx.loadSTS(key: UWBFixture.key, iv: UWBFixture.iv(round: 4))
        try rx.loadSTS(key: UWBFixture.key, iv: UWBFixture.iv(round: 4))
        func frame(heard: Bool) throws -> Bool? {
            if heard { try rx.receive(timeoutMicros: 0) }
            try tx.transmit([1], at: nil, thenReceiveTimeoutMicros: nil)
            air.runUntilIdle()
            _ = try tx.serviceInterrupt()
            guard heard, case .received(_, _, _, let valid)? = try rx.serviceInterrupt().first else { return nil }
            return valid
        }
        // One LOAD_IV, two frames: both ends step together.
        XCTAssertEqual(try frame(heard: true), true)
        XCTAssertEqual(try frame(heard: true), true)
        // A frame the receiver missed puts the counters out of step until the next load.
        XCTAssertNil(try frame(heard: false))
        XCTAssertEqual(try frame(heard: true), false)
        try tx.loadSTS(key: UWBFixture.key, iv: UWBFixture.iv(round: 8))
        try rx.loadSTS(key: UWBFixture.key, iv: UWBFixture.iv(round: 8))
        XCTAssertEqual(try frame(heard: true), true)
    }

    func testSTSRegistersHoldReversedBytesAndOnlyTheCounterIsRewritten() throws {
        let air = UWBFixture.air()
        let (chip, driver) = try UWBFixture.driver(on: air, name: "car")
        chip.clearTrace()
        try driver.loadSTS(key: UWBFixture.key, iv: UWBFixture.iv(round: 0x0102_0304))
        XCTAssertEqual(chip.traceSummary, ["W STS_KEY", "W STS_IV", "W STS_CTRL"])
        XCTAssertEqual(Array(chip.trace[0].bytes.dropFirst(2)), UWBFixture.key.reversed())
        XCTAssertEqual(Array(chip.trace[1].bytes.dropFirst(2).prefix(4)), [0x04, 0x03, 0x02, 0x01], "counter word first")
        XCTAssertEqual(chip.trace[2].bytes, [0xC4, 0x10, 0x01])
        chip.clearTrace()
        try driver.loadSTS(key: UWBFixture.key, iv: UWBFixture.iv(round: 0x0102_0305))
        XCTAssertEqual(chip.trace.map(\.bytes), [[0xC4, 0x70, 0x05, 0x03, 0x02, 0x01], [0xC4, 0x10, 0x01]])
        XCTAssertThrowsError(try driver.loadSTS(key: [1], iv: [])) {
            XCTAssertEqual($0 as? DW3000Error, .invalidSTSMaterial(keyBytes: 1, ivBytes: 0))
        }
    }

    func testPollingFallbackWithoutAnIRQLine() throws {
        let air = UWBFixture.air()
        let (_, driver) = try UWBFixture.driver(on: air, name: "car")
        let runner = UWBRangingRunner(driver: driver, role: TestResponder(), pollIntervalMillis: 2)
        XCTAssertNil(runner.interruptDescriptor)
        XCTAssertEqual(runner.pollIntervalMillis, 2)
        try runner.startRound()
        XCTAssertNil(try runner.poll())
        try driver.receive(timeoutMicros: 200)  // the test role listens forever; give it a timeout
        air.advance(byMicros: 2000)
        XCTAssertEqual(try runner.poll(), .failed(.timeout))
        XCTAssertFalse(runner.isRunning)
        XCTAssertEqual(runner.roundsFinished, 1)
    }
}

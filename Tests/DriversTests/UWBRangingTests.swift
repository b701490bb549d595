// Two simulated chips ranging through the runner with a hand-written DS-TWR pair: accuracy at
// 1.5 m with +-20 ppm drift, across the 40-bit wrap, and the attacks (relay, early detection
// with and without STS). Seeds are fixed: every run sees the same channel.
import XCTest
@testable import Drivers
import Protocol

final class UWBRangingTests: XCTestCase {
    func testDSTWRAtOnePointFiveMetresWithOpposedDrift() throws {
        let pair = try UWBRangingPair(air: UWBFixture.air(seed: 11))
        guard case .range(let measurement)? = try pair.round() else { return XCTFail("no range") }
        // Without noise only DTU rounding remains: a few millimetres.
        XCTAssertEqual(measurement.distanceMetres, 1.5, accuracy: 0.02)
        XCTAssertEqual(measurement.round, 1)
        XCTAssertGreaterThanOrEqual(measurement.stsQuality, 0.6)
        XCTAssertEqual(pair.initiator.lastOutcome, .completed)
        XCTAssertEqual(pair.car.counters.framesSent, 2)
        XCTAssertEqual(pair.phone.counters.framesReceived, 2)
        XCTAssertEqual(pair.carChip.protocolErrors + pair.phoneChip.protocolErrors, [])
    }

    func testNoisyChannelAveragesToTheTrueDistance() throws {
        let pair = try UWBRangingPair(air: UWBFixture.air(seed: 12, noise: 0.03))
        let distances = try pair.rounds(20).compactMap { $0?.metres }
        XCTAssertEqual(distances.count, 20)
        let mean = distances.reduce(0, +) / Double(distances.count)
        XCTAssertEqual(mean, 1.5, accuracy: 0.03)
        XCTAssertTrue(distances.allSatisfy { abs($0 - 1.5) < 0.15 }, "\(distances)")
        XCTAssertEqual(pair.responder.roundsFinished, 20)
    }

    func testRangingAcrossTheWrap() throws {
        // The car's counter wraps during the first round, the phone's sits elsewhere.
        let pair = try UWBRangingPair(air: UWBFixture.air(seed: 13), carStart: UWBTimestamp.modulus - UWBFixture.units(micros: 20_000),
                                      phoneStart: 5)
        // Move to 500 us before the car's wrap: Poll goes out before it, Response and Final after.
        let toWrap = Double(UWBTimestamp.modulus - pair.carChip.localTime.rawValue) / UWBTimestamp.unitsPerMicrosecond
        pair.air.advance(byMicros: toWrap - 500)
        let before = pair.carChip.localTime
        try pair.responder.startRound()
        try pair.initiator.startRound()
        pair.air.runUntilIdle()
        guard case .range(let measurement)? = pair.responder.lastOutcome else { return XCTFail("no range") }
        XCTAssertEqual(measurement.distanceMetres, 1.5, accuracy: 0.02)
        XCTAssertLessThan(pair.carChip.localTime.rawValue, before.rawValue, "the car's clock wrapped during the round")
    }

    func testWalkingTowardsTheCarIsFollowed() throws {
        let air = UWBFixture.air(seed: 14)
        air.channel.distance = .walk(startMetres: 10, metresPerSecond: -1.2, minimumMetres: 0.5)
        let pair = try UWBRangingPair(air: air)
        let distances = try pair.rounds(30).compactMap { $0?.metres }
        XCTAssertEqual(distances.count, 30)
        XCTAssertEqual(distances.first!, 10, accuracy: 0.05)
        XCTAssertLessThan(distances.last!, 7)
        XCTAssertEqual(distances, distances.sorted(by: >), "noise-free and monotonic")
    }

    func testOutOfRangeTimesOutAndLossIsSurvived() throws {
        let air = UWBFixture.air(seed: 15, metres: 100)
        let pair = try UWBRangingPair(air: air)
        XCTAssertNil(try pair.round())
        XCTAssertEqual(pair.initiator.lastOutcome, .failed(.timeout))
        XCTAssertEqual(pair.car.counters.receiveTimeouts, 1)
        air.channel.distance = .fixed(metres: 3)
        air.channel.packetLossProbability = 0.2
        let results = try pair.rounds(20)
        let ranged = results.compactMap { $0 }
        XCTAssertGreaterThan(ranged.count, 5)
        XCTAssertLessThan(ranged.count, 20)
        XCTAssertTrue(ranged.allSatisfy { abs($0.metres - 3) < 0.02 })
        XCTAssertEqual(air.runnerErrors, [])
    }

    func testRelayOnlyMakesTheDistanceLonger() throws {
        // Key 100 m from the car, out of range; a relay with 2 x 15 m of cable and radio and
        // 100 ns of processing makes it answer, but no closer than the relay path.
        let air = UWBFixture.air(seed: 16, metres: 100)
        air.channel.attacks = [.relay(pathMetres: 30, processingNanos: 100)]
        let pair = try UWBRangingPair(air: air)
        let distances = try pair.rounds(5).compactMap { $0?.metres }
        XCTAssertEqual(distances.count, 5)
        let expected = 30 + 100e-9 * 299_792_458
        for distance in distances {
            XCTAssertEqual(distance, expected, accuracy: 0.05)
            XCTAssertGreaterThan(distance, 30)
        }
        // With the key really next to the car, the direct path arrives first: the relay is moot.
        air.channel.distance = .fixed(metres: 1.5)
        let direct = try pair.rounds(3).compactMap { $0?.metres }
        XCTAssertEqual(direct.count, 3)
        XCTAssertTrue(direct.allSatisfy { abs($0 - 1.5) < 0.02 }, "\(direct)")
    }

    func testEarlyDetectionWithoutSTSShrinksTheDistanceSilently() throws {
        var configuration = DW3000Configuration()
        configuration.stsEnabled = false
        let air = UWBFixture.air(seed: 17, metres: 6)
        air.channel.attacks = [.earlyDetection(successProbability: 0.3, advanceMetres: 4)]
        let pair = try UWBRangingPair(air: air, configuration: configuration)
        let results = try pair.rounds(30).compactMap { $0 }
        XCTAssertEqual(results.count, 30)
        let shortened = results.filter { $0.metres < 5 }
        XCTAssertGreaterThan(shortened.count, 3, "\(results.map(\.metres))")
        XCTAssertTrue(results.allSatisfy { $0.metres < 6.02 }, "the attack never lengthens")
        // Nothing tells the attacked rounds apart: no STS, no quality.
        XCTAssertTrue(results.allSatisfy { $0.quality == 0 })
        XCTAssertEqual(pair.phone.counters.stsInvalid, 0)
    }

    func testEarlyDetectionWithSTSIsFlaggedByQuality() throws {
        let air = UWBFixture.air(seed: 17, metres: 6)
        air.channel.attacks = [.earlyDetection(successProbability: 0.3, advanceMetres: 4)]
        let pair = try UWBRangingPair(air: air)
        let results = try pair.rounds(30).compactMap { $0 }
        XCTAssertEqual(results.count, 30)
        let shortened = results.filter { $0.metres < 5.9 }
        let flagged = results.filter { $0.quality < 0.6 }
        XCTAssertGreaterThan(shortened.count, 3)
        // Every shortened round carries a frame whose STS did not correlate; every clean one is exact.
        XCTAssertTrue(shortened.allSatisfy { $0.quality < 0.6 }, "\(results)")
        XCTAssertTrue(results.filter { $0.quality >= 0.6 }.allSatisfy { abs($0.metres - 6) < 0.02 }, "\(results)")
        XCTAssertGreaterThanOrEqual(flagged.count, shortened.count)
        XCTAssertGreaterThan(pair.phone.counters.stsInvalid + pair.car.counters.stsInvalid, 3)
    }

    func testClocksDriftApart() throws {
        let air = UWBFixture.air()
        let fast = air.addChip(name: "fast", driftPPM: 20), slow = air.addChip(name: "slow", driftPPM: -20)
        air.advance(byMicros: 1_000_000)
        // 40 ppm of one second is 40 us: 2.556 million DTU.
        XCTAssertEqual(Double(fast.localTime.units(since: slow.localTime)), 40e-6 * UWBTimestamp.unitsPerSecond, accuracy: 2)
    }

    func testAReplyTooSoonIsALateTransmitForTheRole() throws {
        let pair = try UWBRangingPair(air: UWBFixture.air(seed: 18))
        let hurried = UWBRangingRunner(driver: pair.phone, role: TestResponder(replyDelayMicros: 100))
        pair.air.connect(hurried, to: pair.phoneChip)
        try hurried.startRound()
        try pair.initiator.startRound()
        pair.air.runUntilIdle()
        XCTAssertEqual(hurried.lastOutcome, .failed(.lateTransmit))
        XCTAssertEqual(pair.initiator.lastOutcome, .failed(.timeout))
        XCTAssertEqual(pair.phone.counters.lateTransmits, 1)
        XCTAssertEqual(pair.phoneChip.protocolErrors, [])
    }

    func testSeedsReplayExactly() throws {
        func distances(seed: UInt64) throws -> [Double] {
            let pair = try UWBRangingPair(air: UWBFixture.air(seed: seed, noise: 0.05))
            pair.air.channel.nlosProbability = 0.2
            return try pair.rounds(10).compactMap { $0?.metres }
        }
        XCTAssertEqual(try distances(seed: 99), try distances(seed: 99))
        XCTAssertNotEqual(try distances(seed: 99), try distances(seed: 100))
    }

    func testRNGIsDeterministicAndRoughlyNormal() {
        var a = SimulationRNG(seed: 0), b = SimulationRNG(seed: 0)
        XCTAssertEqual((0..<5).map { _ in a.next() }, (0..<5).map { _ in b.next() })
        var rng = SimulationRNG(seed: 42)
        let samples = (0..<20_000).map { _ in rng.gaussian() }
        let mean = samples.reduce(0, +) / Double(samples.count)
        let variance = samples.map { ($0 - mean) * ($0 - mean) }.reduce(0, +) / Double(samples.count)
        XCTAssertEqual(mean, 0, accuracy: 0.03)
        XCTAssertEqual(variance, 1, accuracy: 0.05)
    }
}

// The range filters: the seed baseline's arithmetic, the constant-velocity filter's tracking,
// and its outlier gate.
import XCTest
@testable import Protocol
import TestHarness

final class ProximityFilterTests: XCTestCase {
    func testSeedFilterMatchesHandComputedSteps() {
        var seed = SeedKalman1D()
        // P = 1 + 0.01 = 1.01; K = 1.01 / 1.11; x = K * 1; P = (1 - K) * 1.01.
        XCTAssertEqual(seed.update(1), 101.0 / 111.0, accuracy: 1e-12)
        XCTAssertEqual(seed.errorCovariance, 10.0 / 111.0 * 1.01, accuracy: 1e-12)
        // P = 0.090991 + 0.01 = 0.100991; K = 0.100991 / 0.200991 = 0.502465;
        // x = 0.909910 + 0.502465 * (2 - 0.909910) = 1.457642.
        XCTAssertEqual(seed.update(2), 1.457642, accuracy: 1e-6)
        XCTAssertEqual(seed.errorCovariance, 0.050247, accuracy: 1e-6)
        XCTAssertEqual(seed.update(2), 1.661548, accuracy: 1e-6)
    }

    func testConstantVelocityFilterConvergesOnAWalk() {
        var filter = RangeKalmanFilter()
        var random = ProximityTestRandom(seed: 1)
        var truth = 12.0
        var lastSecondVelocity = 0.0, lastSecondError = 0.0
        for step in 1...100 { // 5 s at 20 Hz, walking in at 1.2 m/s
            truth -= 1.2 * 0.05
            _ = filter.update(measurement: truth + random.gaussian(sigma: 0.1), atMillis: UInt64(step) * 50)
            if step > 80 {
                lastSecondVelocity += filter.velocity / 20
                lastSecondError = max(lastSecondError, abs((filter.distance ?? .nan) - truth))
            }
        }
        // One velocity estimate from 10 cm ranges is noisy (a few tenths of m/s); its mean
        // over a second is not.
        XCTAssertEqual(lastSecondVelocity, -1.2, accuracy: 0.2)
        XCTAssertLessThan(lastSecondError, 0.15)
    }

    func testConstantVelocityFilterBeatsTheSeedOnANoisyApproach() {
        var random = ProximityTestRandom(seed: 7)
        var filter = RangeKalmanFilter()
        var seed: SeedKalman1D?
        var raw = 0.0, seedError = 0.0, filterError = 0.0, count = 0.0
        var truth = 10.0
        for step in 1...200 { // walk in at 1.3 m/s, stop at 0.8 m
            truth = max(0.8, truth - 1.3 * 0.05)
            let z = truth + random.gaussian(sigma: 0.1)
            _ = filter.update(measurement: z, atMillis: UInt64(step) * 50)
            if seed == nil { seed = SeedKalman1D(estimate: z) }
            let s = seed!.update(z)
            guard step > 10 else { continue } // both settle first
            raw += (z - truth) * (z - truth)
            seedError += (s - truth) * (s - truth)
            filterError += ((filter.distance ?? 0) - truth) * ((filter.distance ?? 0) - truth)
            count += 1
        }
        let rmse = (raw: (raw / count).squareRoot(), seed: (seedError / count).squareRoot(),
                    filter: (filterError / count).squareRoot())
        XCTAssertLessThan(rmse.filter, rmse.seed, "\(rmse)")
        XCTAssertLessThan(rmse.filter, rmse.raw, "\(rmse)")
    }

    func testIrregularIntervalsUseTheRealTimeStep() {
        var filter = RangeKalmanFilter()
        // Moving away at 1 m/s, with rounds 50, 150 and 400 ms apart.
        var t: UInt64 = 0
        for gap in [50, 50, 150, 50, 400, 50, 150, 50, 50, 400, 50, 50] as [UInt64] {
            t += gap
            _ = filter.update(measurement: 2 + Double(t) / 1000, atMillis: t)
        }
        XCTAssertEqual(filter.velocity, 1, accuracy: 0.2)
        XCTAssertEqual(filter.distance ?? .nan, 2 + Double(t) / 1000, accuracy: 0.05)
    }

    func testAGapLongerThanTheResetBoundRestartsTheTrack() {
        var filter = RangeKalmanFilter()
        _ = filter.update(measurement: 3, atMillis: 0)
        _ = filter.update(measurement: 3, atMillis: 50)
        XCTAssertEqual(filter.update(measurement: 9, atMillis: 5000), .initialised)
        XCTAssertEqual(filter.distance, 9)
        XCTAssertEqual(filter.update(measurement: 9, atMillis: UInt64.max), .initialised, "huge gap")
    }

    func testASingleNLOSSpikeIsRejected() {
        var filter = RangeKalmanFilter()
        for step in 0..<20 { _ = filter.update(measurement: 1.0, atMillis: UInt64(step) * 50) }
        XCTAssertEqual(filter.update(measurement: 4.0, atMillis: 1000), .rejected)
        XCTAssertEqual(filter.distance ?? .nan, 1.0, accuracy: 0.01)
        XCTAssertEqual(filter.update(measurement: 1.0, atMillis: 1050), .accepted)
        XCTAssertEqual(filter.consecutiveRejections, 0)
    }

    func testARealJumpIsAcceptedAfterTheRejectionBound() {
        var filter = RangeKalmanFilter() // bound: 3 rejections
        for step in 0..<20 { _ = filter.update(measurement: 1.0, atMillis: UInt64(step) * 50) }
        let outcomes = (20..<24).map { filter.update(measurement: 6.0 + 0.05 * Double($0 % 2), atMillis: UInt64($0) * 50) }
        XCTAssertEqual(outcomes, [.rejected, .rejected, .rejected, .reinitialised])
        XCTAssertEqual(filter.distance ?? .nan, 6.0, accuracy: 0.06)
        XCTAssertEqual(filter.update(measurement: 6.0, atMillis: 24 * 50), .accepted)
    }

    func testScatteredOutliersNeverReinitialiseTheTrack() {
        var filter = RangeKalmanFilter()
        for step in 0..<20 { _ = filter.update(measurement: 12.0, atMillis: UInt64(step) * 50) }
        // An attacker's guesses (or multipath) that do not agree with each other.
        let guesses = [0.3, 1.4, 0.2, 1.1, 0.5, 1.3, 0.1, 0.9, 0.4, 1.5]
        for (i, guess) in guesses.enumerated() {
            XCTAssertEqual(filter.update(measurement: guess, atMillis: UInt64(20 + i) * 50), .rejected)
        }
        XCTAssertEqual(filter.distance ?? .nan, 12.0, accuracy: 0.3)
    }

    func testNonFiniteAndOutOfOrderMeasurementsChangeNothing() {
        var filter = RangeKalmanFilter()
        XCTAssertEqual(filter.update(measurement: .nan, atMillis: 0), .ignored)
        XCTAssertNil(filter.distance)
        _ = filter.update(measurement: 2, atMillis: 100)
        XCTAssertEqual(filter.update(measurement: .infinity, atMillis: 150), .ignored)
        XCTAssertEqual(filter.update(measurement: -.infinity, atMillis: 150), .ignored)
        XCTAssertEqual(filter.update(measurement: 2, atMillis: 50), .ignored, "older than the track")
        XCTAssertEqual(filter.distance, 2)
        XCTAssertEqual(filter.update(measurement: 1e308, atMillis: 200), .rejected)
        XCTAssertTrue(filter.distance?.isFinite ?? false)
    }
}

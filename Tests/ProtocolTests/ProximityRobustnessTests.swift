// Inputs a radio, a driver bug or a clock fault can produce: the engine must neither crash
// nor be talked into a nearer zone by them, and must stay within its memory bound.
import XCTest
@testable import Protocol

final class ProximityRobustnessTests: XCTestCase {
    func testNonFiniteAndAbsurdDistancesAreInvalidRounds() {
        var rig = ProximityRig()
        rig.hold(3.0, rounds: 5)
        for bad in [Double.nan, .infinity, -Double.infinity, -5, 1e9, -Double.greatestFiniteMagnitude] {
            rig.range(bad)
            XCTAssertEqual(rig.estimate.consecutiveValidRounds, 0, "\(bad)")
            XCTAssertEqual(rig.estimate.filteredDistanceMetres ?? .nan, 3.0, accuracy: 0.05, "\(bad)")
        }
        for badQuality in [Double.nan, -Double.infinity, -1] {
            rig.range(3.0, valid: true, quality: badQuality)
            XCTAssertEqual(rig.estimate.consecutiveValidRounds, 0)
        }
        XCTAssertEqual(rig.estimate.roundsTotal, 14)
    }

    func testSlightlyNegativeRangesAtVeryShortRangeAreHonest() {
        var rig = ProximityRig()
        rig.hold(-0.05, rounds: 5)
        XCTAssertEqual(rig.estimate.zone, .immediate)
        XCTAssertTrue(rig.authorize().isAllowed)
    }

    func testTimeGoingBackAFewRoundsIsIgnoredAndBreaksTheRun() {
        var rig = ProximityRig()
        rig.hold(1.0, rounds: 5)
        let before = rig.estimate
        rig.range(4.0, stepMillis: 0)
        rig.now -= 200
        rig.engine.observe(ProximityFixtures.range(0.2), stsValid: true, key: rig.key, atMillis: rig.now)
        let after = rig.engine.estimate(key: rig.key, atMillis: rig.now + 200)
        XCTAssertEqual(after.filteredDistanceMetres, before.filteredDistanceMetres, "not used")
        XCTAssertEqual(after.consecutiveValidRounds, 0, "a clock we cannot trust breaks the run")
        // Asking about a moment before the last range: age saturates at zero.
        XCTAssertEqual(rig.engine.estimate(key: rig.key, atMillis: 0).ageMillis, 0)
    }

    func testAClockThatJumpsFarBackStartsTheKeyOver() {
        var rig = ProximityRig()
        rig.now = 1_000_000
        rig.hold(1.0, rounds: 5)
        rig.now = 1_000
        rig.hold(6.0, rounds: 3)
        XCTAssertEqual(rig.estimate.filteredDistanceMetres ?? .nan, 6.0, accuracy: 0.01)
        XCTAssertEqual(rig.estimate.zone, .approaching)
        XCTAssertNil(rig.refusal(.lock))
    }

    func testHugeGapsAndExtremeTimesDoNotTrap() {
        var rig = ProximityRig()
        rig.now = 0
        rig.hold(1.0, rounds: 3)
        rig.now = UInt64.max - 1000
        rig.hold(1.0, rounds: 3)
        XCTAssertEqual(rig.estimate.zone, .unlock)
        _ = rig.engine.walkAway(atMillis: UInt64.max, doorsClosed: true, locked: false, keys: [rig.key])
        _ = rig.engine.walkAway(atMillis: 0, doorsClosed: true, locked: false, keys: [rig.key])
        rig.engine.observe(rssi: -50, key: rig.key, atMillis: 0)
        rig.engine.observe(rssi: -50, key: rig.key, atMillis: UInt64.max)
        XCTAssertEqual(rig.engine.estimate(key: rig.key, atMillis: 0).ageMillis, 0)
        XCTAssertNotNil(rig.engine.estimate(key: rig.key, atMillis: UInt64.max).ageMillis)
    }

    func testNonsenseConfigurationIsClampedNotTrapped() {
        let configuration = ProximityConfiguration(measurementSigmaMetres: .nan, accelerationSpectralDensity: -1,
                                                   innovationGate: 0, maxConsecutiveRejections: -4,
                                                   requiredConsecutiveValidRounds: 0, rssiSmoothing: .infinity,
                                                   maxTrackedKeys: -3)
        XCTAssertEqual(configuration.measurementSigmaMetres, 0.1)
        XCTAssertEqual(configuration.requiredConsecutiveValidRounds, 1)
        XCTAssertEqual(configuration.maxTrackedKeys, 1)
        var rig = ProximityRig(configuration: configuration)
        rig.hold(1.0, rounds: 3)
        XCTAssertEqual(rig.estimate.zone, .unlock)
    }

    func testForgetDropsTheKey() {
        var rig = ProximityRig()
        rig.hold(1.0, rounds: 3)
        rig.engine.forget(key: rig.key)
        XCTAssertEqual(rig.refusal(), .noRanging)
        XCTAssertEqual(rig.engine.trackedKeyCount, 0)
    }

    func testHoursOfRoundsKeepMemoryBounded() {
        // Three hours at 20 Hz for one key (216,000 rounds, with failures and RSSI), while
        // 40 other keys come and go: the engine never tracks more than its bound, and the
        // per-key state is fixed-size, so nothing grows with time.
        var rig = ProximityRig(configuration: ProximityConfiguration(maxTrackedKeys: 8))
        var random = ProximityTestRandom(seed: 11)
        let visitors = (10..<50).map { ProximityFixtures.key(UInt8($0)) }
        let rounds = 3 * 3600 * 20
        var maxTracked = 0
        for round in 0..<rounds {
            let truth = 8 + 7 * sin(Double(round) / 2000)
            if round % 37 == 0 {
                rig.failure()
            } else {
                rig.range(truth + random.gaussian(sigma: 0.1))
            }
            if round % 20 == 0 { rig.engine.observe(rssi: -60 - 20 * random.unit(), key: rig.key, atMillis: rig.now) }
            if round % 100 == 0 {
                let visitor = visitors[(round / 100) % visitors.count]
                rig.engine.observe(ProximityFixtures.range(4), stsValid: true, key: visitor, atMillis: rig.now)
            }
            maxTracked = max(maxTracked, rig.engine.trackedKeyCount)
        }
        XCTAssertEqual(maxTracked, 8)
        XCTAssertEqual(rig.engine.trackedKeys.first, rig.key, "most recently heard first")
        XCTAssertEqual(rig.engine.trackedKeys.count, 8)
        XCTAssertLessThan(MemoryLayout<ProximityTracker>.size, 1024, "fixed-size per key")
        // The busy key was never the least recently used one, so it was never evicted.
        XCTAssertEqual(rig.estimate.roundsTotal, UInt64(rounds))
        XCTAssertNotEqual(rig.estimate.zone, .outOfRange)
    }
}

// Zones: edges, hysteresis, and the security rules that decide when a key counts as inside.
import XCTest
@testable import Protocol

final class ProximityZoneTests: XCTestCase {
    let configuration = ProximityConfiguration()

    func testZoneEdges() {
        let cases: [(Double, ProximityZone)] = [
            (-0.2, .immediate), (0.49, .immediate), (0.5, .unlock), (1.49, .unlock), (1.5, .near),
            (4.99, .near), (5, .approaching), (14.9, .approaching), (15, .outOfRange),
            (.infinity, .outOfRange), (.nan, .outOfRange), (-.infinity, .immediate),
        ]
        for (distance, zone) in cases {
            XCTAssertEqual(ZoneHysteresis.zone(for: distance, configuration: configuration), zone, "\(distance)")
        }
    }

    func testHysteresisEntersBelowTheEdgeAndLeavesAboveEdgePlusMargin() {
        var zone = ProximityZone.near
        zone = ZoneHysteresis.next(from: zone, distance: 1.55, configuration: configuration)
        XCTAssertEqual(zone, .near, "not below 1.5 yet")
        zone = ZoneHysteresis.next(from: zone, distance: 1.45, configuration: configuration)
        XCTAssertEqual(zone, .unlock)
        zone = ZoneHysteresis.next(from: zone, distance: 1.69, configuration: configuration)
        XCTAssertEqual(zone, .unlock, "inside the 0.2 m margin")
        zone = ZoneHysteresis.next(from: zone, distance: 1.71, configuration: configuration)
        XCTAssertEqual(zone, .near)
        // 10 % of 15 m is more than 0.2 m: Approaching is left only beyond 16.5 m.
        XCTAssertEqual(ZoneHysteresis.next(from: .approaching, distance: 16.4, configuration: configuration), .approaching)
        XCTAssertEqual(ZoneHysteresis.next(from: .approaching, distance: 16.6, configuration: configuration), .outOfRange)
        // A big step outwards passes several zones at once; NaN changes nothing.
        XCTAssertEqual(ZoneHysteresis.next(from: .immediate, distance: 40, configuration: configuration), .outOfRange)
        XCTAssertEqual(ZoneHysteresis.next(from: .unlock, distance: .nan, configuration: configuration), .unlock)
    }

    func testNoFlappingAtTheUnlockEdge() {
        var rig = ProximityRig()
        var random = ProximityTestRandom(seed: 3)
        rig.hold(1.2, rounds: 20)
        XCTAssertEqual(rig.estimate.zone, .unlock)
        var changes = 0
        var previous = rig.estimate.filteredZone
        for _ in 0..<1200 { // a minute standing right at 1.5 m with 10 cm noise
            rig.range(1.5 + random.gaussian(sigma: 0.1))
            let zone = rig.estimate.filteredZone
            if zone != previous { changes += 1 }
            previous = zone
        }
        XCTAssertLessThanOrEqual(changes, 2, "zone changed \(changes) times")
    }

    func testKConsecutiveValidRoundsAreNeededToCountAsInside() {
        var rig = ProximityRig()
        rig.hold(1.0, rounds: 2)
        XCTAssertEqual(rig.estimate.consecutiveValidRounds, 2)
        XCTAssertEqual(rig.estimate.filteredZone, .unlock)
        XCTAssertEqual(rig.estimate.zone, .outOfRange, "2 valid rounds are not enough")
        rig.range(1.0)
        XCTAssertEqual(rig.estimate.zone, .unlock, "3 are")
        rig.range(1.0, valid: false)
        XCTAssertEqual(rig.estimate.consecutiveValidRounds, 0, "an invalid round resets the run")
        XCTAssertEqual(rig.estimate.zone, .outOfRange)
        rig.hold(1.0, rounds: 3)
        XCTAssertEqual(rig.estimate.zone, .unlock)
        rig.failure()
        XCTAssertEqual(rig.estimate.consecutiveValidRounds, 0, "a failed round resets the run")
        rig.hold(1.0, rounds: 3)
        rig.range(1.0, valid: true, quality: 0.5)
        XCTAssertEqual(rig.estimate.consecutiveValidRounds, 0, "quality below the threshold is invalid whatever the driver says")
    }

    func testALostRoundNeitherCountsNorBreaksTheRun() {
        var rig = ProximityRig()
        rig.hold(1.0, rounds: 2)
        rig.loss()
        XCTAssertEqual(rig.estimate.consecutiveValidRounds, 2, "a frame lost on the air is no evidence either way")
        XCTAssertEqual(rig.estimate.zone, .outOfRange, "and it does not count as a valid round")
        XCTAssertEqual(rig.estimate.roundsTotal, 3)
        rig.range(1.0)
        XCTAssertEqual(rig.estimate.zone, .unlock)
        // A long silence of lost rounds ages the estimate out and breaks the run.
        for _ in 0..<30 { rig.loss() }
        XCTAssertEqual(rig.refusal(), .stale)
        rig.range(1.0)
        XCTAssertEqual(rig.estimate.consecutiveValidRounds, 1, "the range after a 1.5 s gap starts a new run")
        XCTAssertEqual(rig.estimate.zone, .outOfRange)
    }

    func testKIsConfigurable() {
        var rig = ProximityRig(configuration: ProximityConfiguration(requiredConsecutiveValidRounds: 5))
        rig.hold(1.0, rounds: 4)
        XCTAssertEqual(rig.estimate.zone, .outOfRange)
        rig.range(1.0)
        XCTAssertEqual(rig.estimate.zone, .unlock)
    }

    func testRangesFromInvalidRoundsNeverEnterTheFilter() {
        var rig = ProximityRig()
        rig.hold(8.0, rounds: 10)
        for _ in 0..<10 { rig.range(0.3, valid: false) }           // a ghost peak caught by STS
        for _ in 0..<10 { rig.range(0.3, valid: true, quality: 0.2) }
        XCTAssertEqual(rig.estimate.filteredDistanceMetres ?? .nan, 8.0, accuracy: 0.01)
        XCTAssertEqual(rig.estimate.lastRawDistanceMetres ?? .nan, 8.0, accuracy: 0.01)
    }

    func testASingleNLOSSpikeDoesNotMoveTheZone() {
        var rig = ProximityRig()
        rig.hold(1.0, rounds: 20)
        rig.range(4.0) // body blocks the line of sight for one round
        XCTAssertEqual(rig.estimate.zone, .unlock)
        XCTAssertEqual(rig.estimate.filteredDistanceMetres ?? .nan, 1.0, accuracy: 0.05)
        XCTAssertEqual(rig.estimate.lastRawDistanceMetres, 4.0)
        XCTAssertTrue(rig.authorize().isAllowed)
    }

    func testARealJumpMovesTheZoneAfterTheBound() {
        var rig = ProximityRig()
        rig.hold(1.0, rounds: 20)
        rig.hold(8.0, rounds: 3)
        XCTAssertEqual(rig.estimate.zone, .unlock)
        rig.range(8.0)
        XCTAssertEqual(rig.estimate.filteredZone, .approaching)
        XCTAssertEqual(rig.estimate.consecutiveValidRounds, 1, "a new track earns its run afresh")
        rig.hold(8.0, rounds: 2)
        XCTAssertEqual(rig.estimate.zone, .approaching)
    }

    func testAForgedFirstRoundCannotBorrowTheHonestRoundsThatFollow() {
        // Without STS a ghost peak can start the track at 0.8 m; the honest 12 m rounds after
        // it are outliers to that track and must not make up the k rounds it needs.
        var rig = ProximityRig()
        rig.range(0.8)
        for _ in 0..<3 {
            rig.range(12)
            XCTAssertNotEqual(rig.authorize().verdict, .allow)
        }
        rig.range(12) // the fourth consistent outlier moves the track to the truth
        XCTAssertEqual(rig.estimate.filteredZone, .approaching)
        XCTAssertEqual(rig.refusal(), .notEnoughValidRounds)
        rig.hold(12, rounds: 5)
        XCTAssertEqual(rig.refusal(), .tooFar)
    }

    func testAGatedOutSpikeNeitherCountsNorBreaksTheRun() {
        var rig = ProximityRig()
        rig.hold(1.0, rounds: 2)
        rig.range(4.0)
        XCTAssertEqual(rig.estimate.consecutiveValidRounds, 2)
        rig.range(1.0)
        XCTAssertEqual(rig.estimate.zone, .unlock)
    }

    func testAStaleEstimateIsNotUsed() {
        var rig = ProximityRig()
        rig.hold(1.0, rounds: 5)
        XCTAssertEqual(rig.estimate.zone, .unlock)
        rig.now += 1001 // past estimateStaleMillis without a round
        XCTAssertEqual(rig.estimate.zone, .outOfRange)
        XCTAssertEqual(rig.estimate.ageMillis, 1001)
        // After the gap the track restarts, and so does the run of valid rounds.
        rig.range(1.0)
        XCTAssertEqual(rig.estimate.filteredZone, .unlock)
        XCTAssertEqual(rig.estimate.consecutiveValidRounds, 1)
        XCTAssertEqual(rig.estimate.zone, .outOfRange)
        rig.hold(1.0, rounds: 2)
        XCTAssertEqual(rig.estimate.zone, .unlock)
    }
}

// Proximity decisions: which commands need the key close, every refusal reason, BLE RSSI,
// passive entry and walk-away lock.
import XCTest
@testable import Protocol

final class ProximityPolicyTests: XCTestCase {
    func testUnlockAndTrunkAreAllowedInTheUnlockZoneWithEvidence() {
        var rig = ProximityRig()
        rig.hold(1.0, rounds: 3)
        for command in [CommandCode.unlock, .trunkRelease] {
            let decision = rig.authorize(command)
            XCTAssertEqual(decision.verdict, .allow, "\(command)")
            XCTAssertTrue(decision.proximityRequired)
            XCTAssertEqual(decision.evidence.key, rig.key)
            XCTAssertEqual(decision.evidence.filteredDistanceMetres ?? .nan, 1.0, accuracy: 0.01)
            XCTAssertEqual(decision.evidence.stsQuality, 0.9)
            XCTAssertEqual(decision.evidence.consecutiveValidRounds, 3)
            XCTAssertEqual(decision.evidence.roundsTotal, 3)
            XCTAssertEqual(decision.evidence.ageMillis, 0)
            XCTAssertEqual(decision.evidence.atMillis, rig.now)
        }
        rig.hold(0.3, rounds: 10)
        XCTAssertEqual(rig.estimate.zone, .immediate)
        XCTAssertTrue(rig.authorize().isAllowed, "Immediate is inside Unlock")
    }

    func testLockStatusAndOthersNeedNoRanging() {
        let rig = ProximityRig()
        for command in [CommandCode.lock, .status, .userVerified, .revoke] {
            let decision = rig.authorize(command)
            XCTAssertEqual(decision.verdict, .allow, "\(command)")
            XCTAssertFalse(decision.proximityRequired)
        }
        // Whatever commands exist: only those that move an actuator, other than lock, need it.
        for command in CommandCode.allCases {
            XCTAssertEqual(rig.authorize(command).isAllowed, !command.movesActuator || command == .lock, "\(command)")
        }
    }

    func testRefusalNoRanging() {
        let rig = ProximityRig()
        XCTAssertEqual(rig.refusal(), .noRanging)
        XCTAssertEqual(rig.refusal(.trunkRelease), .noRanging)
    }

    func testRefusalStale() {
        var rig = ProximityRig()
        rig.hold(1.0, rounds: 5)
        rig.now += 501
        XCTAssertEqual(rig.refusal(), .stale)
        rig.now -= 1
        XCTAssertNil(rig.refusal(), "500 ms old is still fresh")
    }

    func testRefusalTooFar() {
        var rig = ProximityRig()
        rig.hold(3.0, rounds: 5)
        XCTAssertEqual(rig.refusal(), .tooFar)
        XCTAssertEqual(rig.estimate.zone, .near)
    }

    func testRefusalNotEnoughValidRounds() {
        var rig = ProximityRig()
        rig.hold(1.0, rounds: 2)
        XCTAssertEqual(rig.refusal(), .notEnoughValidRounds)
        rig.range(1.0)
        XCTAssertNil(rig.refusal())
        rig.range(0.2, valid: false)
        XCTAssertEqual(rig.refusal(), .notEnoughValidRounds)
    }

    func testRefusalImplausibleWhenRSSIIsFarTooWeak() {
        var rig = ProximityRig()
        rig.hold(0.8, rounds: 5)
        rig.engine.observe(rssi: -95, key: rig.key, atMillis: rig.now)
        XCTAssertEqual(rig.refusal(), .implausible)
        XCTAssertFalse(rig.estimate.plausible)
        XCTAssertEqual(rig.estimate.zone, .near, "kept out of the Unlock zone")
        // Far away, the same RSSI is plausible.
        rig.hold(8, rounds: 4)
        XCTAssertTrue(rig.estimate.plausible)
    }

    func testNoRSSIOrStaleRSSIDoesNotBlock() {
        var rig = ProximityRig()
        rig.hold(0.8, rounds: 5)
        XCTAssertNil(rig.refusal(), "no RSSI at all")
        rig.engine.observe(rssi: -95, key: rig.key, atMillis: rig.now)
        XCTAssertEqual(rig.refusal(), .implausible)
        for _ in 0..<70 { rig.range(0.8) } // 3.5 s later the RSSI sample is too old to judge by
        XCTAssertNil(rig.estimate.rssiDBm)
        XCTAssertNil(rig.refusal())
    }

    func testASingleFadeDoesNotMakeAKeyImplausible() {
        var rig = ProximityRig()
        rig.hold(0.8, rounds: 5)
        rig.engine.observe(rssi: -55, key: rig.key, atMillis: rig.now)
        rig.engine.observe(rssi: -100, key: rig.key, atMillis: rig.now + 10) // smoothed: -68.5
        XCTAssertNil(rig.refusal())
    }

    func testRSSIWakesRanging() {
        var engine = ProximityEngine()
        let key = ProximityFixtures.key(2)
        XCTAssertEqual(engine.observe(rssi: -75, key: key, atMillis: 0), .stayIdle)
        XCTAssertEqual(engine.observe(rssi: -70, key: key, atMillis: 10), .stayIdle, "above -70, not at")
        XCTAssertEqual(engine.observe(rssi: -65, key: key, atMillis: 20), .startRanging)
        XCTAssertEqual(engine.observe(rssi: .nan, key: key, atMillis: 30), .stayIdle)
        XCTAssertEqual(engine.observe(rssi: .infinity, key: key, atMillis: 40), .stayIdle)
        var custom = ProximityEngine(configuration: ProximityConfiguration(wakeRSSI: -80))
        XCTAssertEqual(custom.observe(rssi: -75, key: key, atMillis: 0), .startRanging)
    }

    func testPassiveEntryPicksTheNearestKeyAllowedToUnlock() {
        var rig = ProximityRig()
        let near = ProximityFixtures.key(2), nearer = ProximityFixtures.key(3), far = ProximityFixtures.key(4)
        let unranged = ProximityFixtures.key(5)
        for _ in 0..<5 {
            rig.range(1.2, key: near)
            rig.range(0.6, key: nearer, stepMillis: 0)
            rig.range(4.0, key: far, stepMillis: 0)
        }
        let decision = rig.engine.passiveEntry(handlePulledAtMillis: rig.now,
                                               authenticatedKeys: [far, near, unranged, nearer, near])
        XCTAssertEqual(decision.key, nearer)
        XCTAssertEqual(decision.candidates.count, 4, "duplicates are considered once")
        XCTAssertEqual(decision.candidates.filter(\.isAllowed).count, 2)

        let none = rig.engine.passiveEntry(handlePulledAtMillis: rig.now, authenticatedKeys: [far, unranged])
        XCTAssertNil(none.key)
        XCTAssertNil(rig.engine.passiveEntry(handlePulledAtMillis: rig.now, authenticatedKeys: []).key)
        XCTAssertNil(rig.engine.passiveEntry(handlePulledAtMillis: rig.now + 600, authenticatedKeys: [nearer]).key,
                     "stale by the time the handle is pulled")
    }
}

final class ProximityWalkAwayTests: XCTestCase {
    /// Walks the key in to 1 m and out to 11 m at 1.4 m/s; returns its last time in Near.
    private func walkInAndOut(_ rig: inout ProximityRig) -> UInt64 {
        for step in 0..<130 { rig.range(10 - Double(step) * 0.07) }
        rig.hold(1.0, rounds: 20)
        for step in 0..<150 { rig.range(1 + Double(step) * 0.07) }
        let lastNear = rig.estimate.lastNearMillis ?? 0
        XCTAssertGreaterThan(lastNear, 0)
        XCTAssertLessThan(lastNear, rig.now)
        return lastNear
    }

    func testLocksOnceEveryKeyHasBeenAwayForTheDelay() throws {
        var rig = ProximityRig()
        XCTAssertEqual(rig.engine.walkAway(atMillis: rig.now, doorsClosed: false, locked: false, keys: [rig.key]).reason,
                       .noKeyWasNear)
        let lastNear = walkInAndOut(&rig)
        let early = rig.engine.walkAway(atMillis: lastNear + 9_999, doorsClosed: true, locked: false, keys: [rig.key])
        XCTAssertFalse(early.lock)
        XCTAssertEqual(early.reason, .keyNearby)
        let due = rig.engine.walkAway(atMillis: lastNear + 10_000, doorsClosed: true, locked: false, keys: [rig.key])
        XCTAssertTrue(due.lock)
        XCTAssertEqual(due.reason, .everyKeyAway)
        XCTAssertEqual(due.evidence.map(\.key), [rig.key])
        XCTAssertEqual(due.evidence.first?.lastNearMillis, lastNear)
        // The lock did not take (still unlocked): not asked for twice for the same walk-away.
        let again = rig.engine.walkAway(atMillis: lastNear + 20_000, doorsClosed: true, locked: false, keys: [rig.key])
        XCTAssertFalse(again.lock)
        XCTAssertEqual(again.reason, .alreadyFired)
    }

    func testAKeyComingBackCancels() {
        var rig = ProximityRig()
        _ = rig.engine.walkAway(atMillis: rig.now, doorsClosed: true, locked: false, keys: [rig.key])
        let lastNear = walkInAndOut(&rig)
        XCTAssertFalse(rig.engine.walkAway(atMillis: lastNear + 5_000, doorsClosed: true, locked: false,
                                           keys: [rig.key]).lock)
        rig.now = lastNear + 6_000
        rig.hold(3.0, rounds: 5) // back within 5 m
        let decision = rig.engine.walkAway(atMillis: lastNear + 12_000, doorsClosed: true, locked: false, keys: [rig.key])
        XCTAssertFalse(decision.lock)
        XCTAssertEqual(decision.reason, .keyNearby)
    }

    func testEveryKeyThatWasNearMustBeAway() {
        var rig = ProximityRig()
        let other = ProximityFixtures.key(9)
        _ = rig.engine.walkAway(atMillis: rig.now, doorsClosed: true, locked: false, keys: [rig.key, other])
        rig.hold(2.0, rounds: 5, key: other)
        let lastNear = walkInAndOut(&rig)
        // `other` stayed at 2 m but stopped ranging when rig's walk began; keep it near.
        for _ in 0..<200 { rig.range(2.0, key: other) }
        let decision = rig.engine.walkAway(atMillis: max(lastNear + 10_000, rig.now), doorsClosed: true,
                                           locked: false, keys: [rig.key, other])
        XCTAssertFalse(decision.lock)
        XCTAssertEqual(decision.reason, .keyNearby)
        XCTAssertEqual(Set(decision.evidence.map(\.key)), [rig.key, other])
    }

    func testDoorsOpenOrAlreadyLockedNeverLock() {
        var rig = ProximityRig()
        _ = rig.engine.walkAway(atMillis: rig.now, doorsClosed: true, locked: false, keys: [rig.key])
        let lastNear = walkInAndOut(&rig)
        let open = rig.engine.walkAway(atMillis: lastNear + 15_000, doorsClosed: false, locked: false, keys: [rig.key])
        XCTAssertEqual(open.reason, .doorOpen)
        XCTAssertFalse(open.lock)
        let locked = rig.engine.walkAway(atMillis: lastNear + 16_000, doorsClosed: true, locked: true, keys: [rig.key])
        XCTAssertEqual(locked.reason, .alreadyLocked)
        XCTAssertFalse(locked.lock)
    }

    func testARemoteUnlockWithNoKeyNearbyIsNotUndone() {
        var rig = ProximityRig()
        let lastNear = walkInAndOut(&rig)
        XCTAssertEqual(rig.engine.walkAway(atMillis: lastNear + 11_000, doorsClosed: true, locked: true,
                                           keys: [rig.key]).reason, .alreadyLocked)
        // An hour later the owner unlocks from afar for a courier.
        let later = lastNear + 3_600_000
        let decision = rig.engine.walkAway(atMillis: later, doorsClosed: true, locked: false, keys: [rig.key])
        XCTAssertFalse(decision.lock)
        XCTAssertEqual(decision.reason, .noKeyWasNear)
    }
}

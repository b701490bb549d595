// The trusted-time policy (docs/protocol.md section 18.7) on hand-driven clocks.
import XCTest
@testable import Protocol

final class KeysTrustedClockTests: XCTestCase {
    let mark: Int64 = Fixtures.wallStart
    let ownerA = TimeSource.owner(KeyID(publicKey: KeysFixtures.owner.publicKey))
    let ownerB = TimeSource.owner(KeyID(publicKey: KeysFixtures.secondOwner.publicKey))

    func testAfterARestartTimeIsUntrustedAndNeverBeforeTheMark() {
        var clock = TrustedClock(mark: mark)
        let time = clock.time(systemWallSeconds: 0, systemSynchronized: false, monotonicMillis: 1_000)
        XCTAssertFalse(time.wallClockTrusted)
        XCTAssertEqual(time.wallSeconds, mark, "a Pi boots in 1970; the mark is a lower bound")
        XCTAssertEqual(clock.mark, mark)
        XCTAssertEqual(TrustedClock(mark: nil).mark, 0)
    }

    func testASynchronisedSystemClockIsTrustedAndCarriedForward() {
        var clock = TrustedClock(mark: mark)
        let synced = clock.time(systemWallSeconds: mark + 3_600, systemSynchronized: true, monotonicMillis: 10_000)
        XCTAssertTrue(synced.wallClockTrusted)
        XCTAssertEqual(synced.wallSeconds, mark + 3_600)
        XCTAssertEqual(clock.mark, mark + 3_600, "the mark follows trusted time")
        // NTP lost: the anchor carries on with the monotonic clock, whatever the system says.
        let later = clock.time(systemWallSeconds: 5, systemSynchronized: false, monotonicMillis: 70_000)
        XCTAssertTrue(later.wallClockTrusted)
        XCTAssertEqual(later.wallSeconds, mark + 3_660)
        XCTAssertEqual(clock.mark, mark + 3_660)
    }

    func testTheMarkNeverMovesBack() {
        var clock = TrustedClock(mark: mark)
        _ = clock.time(systemWallSeconds: mark - 100, systemSynchronized: true, monotonicMillis: 1)
        XCTAssertEqual(clock.mark, mark)
        XCTAssertEqual(clock.time(systemWallSeconds: mark - 100, systemSynchronized: true, monotonicMillis: 2).wallSeconds, mark,
                       "a little behind the mark: trusted, at the mark")
    }

    func testNTPFarBehindTheMarkIsNotBelieved() {
        var clock = TrustedClock(mark: mark)
        _ = clock.time(systemWallSeconds: mark, systemSynchronized: true, monotonicMillis: 1)
        let conflict = clock.time(systemWallSeconds: mark - 86_400, systemSynchronized: true, monotonicMillis: 2_000)
        XCTAssertFalse(conflict.wallClockTrusted, "fail closed")
        XCTAssertEqual(conflict.wallSeconds, mark)
        XCTAssertFalse(clock.isTrusted)
    }

    func testAnOwnerTimestampAnchorsWithinTheStep() {
        var clock = TrustedClock(mark: mark)
        XCTAssertEqual(clock.observeSignedTimestamp(mark + 86_400, from: ownerA, monotonicMillis: 5_000), .anchored(seconds: mark + 86_400))
        let time = clock.time(systemWallSeconds: 0, systemSynchronized: false, monotonicMillis: 15_000)
        XCTAssertTrue(time.wallClockTrusted)
        XCTAssertEqual(time.wallSeconds, mark + 86_410)
        XCTAssertEqual(clock.observeSignedTimestamp(mark + 99_999, from: ownerB, monotonicMillis: 16_000), .alreadyTrusted,
                       "a trusted clock is not adjusted")
    }

    func testTimestampsBehindTheMarkAreIgnored() {
        var clock = TrustedClock(mark: mark)
        XCTAssertEqual(clock.observeSignedTimestamp(mark - 3_600, from: ownerA, monotonicMillis: 1), .behindMark)
        XCTAssertFalse(clock.isTrusted)
        XCTAssertEqual(clock.observeSignedTimestamp(mark - 30, from: ownerA, monotonicMillis: 2), .anchored(seconds: mark),
                       "within 60 s: anchored at the mark")
    }

    func testALargeStepNeedsASecondSource() {
        var clock = TrustedClock(mark: mark)
        let far = mark + 30 * 86_400
        XCTAssertEqual(clock.observeSignedTimestamp(far, from: ownerA, monotonicMillis: 1_000), .awaitingCorroboration)
        XCTAssertFalse(clock.isTrusted)
        XCTAssertEqual(clock.observeSignedTimestamp(far + 10, from: ownerA, monotonicMillis: 11_000), .awaitingCorroboration,
                       "the same source twice is not corroboration")
        XCTAssertEqual(clock.observeSignedTimestamp(far + 5_000, from: ownerB, monotonicMillis: 12_000), .awaitingCorroboration,
                       "disagreeing sources")
        XCTAssertEqual(clock.observeSignedTimestamp(far + 5_020, from: ownerA, monotonicMillis: 30_000), .anchored(seconds: far + 5_018),
                       "the earlier of two agreeing readings")
        XCTAssertTrue(clock.time(systemWallSeconds: 0, systemSynchronized: false, monotonicMillis: 30_000).wallClockTrusted)
    }

    func testWithNoMarkEvenASmallTimeNeedsTwoSources() {
        var clock = TrustedClock(mark: nil)
        XCTAssertEqual(clock.observeSignedTimestamp(mark, from: ownerA, monotonicMillis: 0), .awaitingCorroboration)
        XCTAssertEqual(clock.observeSignedTimestamp(mark + 2, from: .fleet(KeyID(publicKey: Fixtures.carIdentity.publicKey)),
                                                    monotonicMillis: 2_000), .anchored(seconds: mark + 2))
    }

    func testCorroborationExpires() {
        var clock = TrustedClock(mark: mark)
        let far = mark + 30 * 86_400
        _ = clock.observeSignedTimestamp(far, from: ownerA, monotonicMillis: 0)
        XCTAssertEqual(clock.observeSignedTimestamp(far + 3_601, from: ownerB, monotonicMillis: 3_601_000), .awaitingCorroboration)
    }

    /// Through the engine: an untrusted car refuses a time-limited share until an owner's
    /// handshake anchors time; then the same share works.
    func testAnOwnerHandshakeLetsSharesWorkAgain() throws {
        var clock = TrustedClock(mark: Fixtures.wallStart - 3_600)
        var rig = KeysRig(trusted: false)
        rig.now = clock.time(systemWallSeconds: 0, systemSynchronized: false, monotonicMillis: rig.now.monotonicMillis)
        let certificate = try KeysFixtures.share().encoded()
        var guest = rig.phone(KeysFixtures.guest, certificate: certificate)
        XCTAssertEqual(try rig.connect(&guest).cleartextFault, .clockNotTrusted)

        // The owner's phone clock says wallStart; its AuthResponse timestamp is signed.
        var owner = rig.phone(KeysFixtures.owner)
        let challenge = try XCTUnwrap(rig.toCar(try owner.session.start(), link: owner.link).sent.first)
        let phoneNow = ProtocolTime(monotonicMillis: 1, wallSeconds: Fixtures.wallStart, wallClockTrusted: true)
        guard case .send(let auth) = try owner.session.receive(challenge, now: phoneNow) else { return XCTFail() }
        let grant = try XCTUnwrap(rig.toCar(auth, link: owner.link).grants.first)
        XCTAssertEqual(grant.phoneTimestamp, UInt32(Fixtures.wallStart))
        XCTAssertEqual(grant.record.role, .owner)
        XCTAssertEqual(clock.observeSignedTimestamp(Int64(grant.phoneTimestamp), from: .owner(grant.keyID),
                                                    monotonicMillis: rig.now.monotonicMillis), .anchored(seconds: Fixtures.wallStart))
        rig.now = clock.time(systemWallSeconds: 0, systemSynchronized: false, monotonicMillis: rig.now.monotonicMillis + 1_000)
        XCTAssertTrue(rig.now.wallClockTrusted)
        var again = rig.phone(KeysFixtures.guest, certificate: certificate)
        XCTAssertNotNil(try rig.connect(&again).grants.first)
    }
}

// Rule A3 must not depend on timing: an AuthResponse that arrives after its challenge expired
// is `challengeExpired` whether or not the engine's housekeeping swept the challenge first,
// and its audit record keeps the key ID (an independent implementation saw
// `reusedChallenge` without a key in most runs, depending on when the tick ran).
import XCTest
@testable import Protocol

final class LateAuthResponseTests: XCTestCase {
    /// A handshake whose AuthResponse is held back `seconds`; the car has not seen it yet.
    private func heldAnswer(seconds: Double) throws -> (rig: Rig, auth: Bytes) {
        var rig = Rig()
        let (_, challenge) = try rig.helloAndChallenge()
        guard case .send(let auth) = try rig.phone.receive(challenge, now: rig.now) else {
            XCTFail("phone did not answer")
            throw PhoneError.notEstablished
        }
        rig.advance(seconds: seconds)
        return (rig, auth)
    }

    private func expiredAnswer(sweep: Bool) throws -> (rig: Rig, actions: [CarAction], auth: Bytes) {
        var (rig, auth) = try heldAnswer(seconds: 11)
        if sweep { _ = rig.car.tick(now: rig.now) }
        return (rig, rig.toCar(auth), auth)
    }

    func testLateAnswerAfterTheSweepIsChallengeExpiredWithItsKeyID() throws {
        let (_, actions, _) = try expiredAnswer(sweep: true)
        XCTAssertEqual(actions.cleartextFault, .challengeExpired)
        XCTAssertEqual(actions.audits.first?.keyID, KeyID(publicKey: Fixtures.phoneKey.publicKey))
        XCTAssertTrue(actions.grants.isEmpty)
    }

    func testLateAnswerBeforeTheSweepIsTheSame() throws {
        let (_, actions, _) = try expiredAnswer(sweep: false)
        XCTAssertEqual(actions.cleartextFault, .challengeExpired)
        XCTAssertEqual(actions.audits.first?.keyID, KeyID(publicKey: Fixtures.phoneKey.publicKey))
    }

    func testTheExpiredChallengeReplayedOnAnotherLinkIsReused() throws {
        var (rig, _, auth) = try expiredAnswer(sweep: true)
        let replay = rig.toCar(auth, link: LinkID(99))
        XCTAssertEqual(replay.cleartextFault, .reusedChallenge, "another link never learns anything but 'used'")
        XCTAssertNil(replay.audits.first?.keyID, "no key is credited to a replay on a foreign link")
    }

    /// Rule A1 on a foreign link is `reusedChallenge` once the challenge expired, whether or not
    /// the sweep ran first (it was `unknownChallenge` before the sweep and `reusedChallenge`
    /// after it, so the answer depended on the tick).
    func testTheExpiredChallengeOnAnotherLinkBeforeTheSweepIsReusedToo() throws {
        var (rig, auth) = try heldAnswer(seconds: 10.6)
        let replay = rig.toCar(auth, link: LinkID(99))
        XCTAssertEqual(replay.cleartextFault, .reusedChallenge)
        XCTAssertNil(replay.audits.first?.keyID)
        let own = rig.toCar(auth)
        XCTAssertEqual(own.cleartextFault, .challengeExpired, "its own link still says expired")
        XCTAssertEqual(own.audits.first?.keyID, KeyID(publicKey: Fixtures.phoneKey.publicKey))
    }

    /// A challenge answered on time but first presented elsewhere: outstanding on its link,
    /// so nothing is known of it on another link (never accepted there).
    func testAnOutstandingChallengeOnAnotherLinkIsUnknownAndStaysUsable() throws {
        var rig = Rig()
        let (_, challenge) = try rig.helloAndChallenge()
        guard case .send(let auth) = try rig.phone.receive(challenge, now: rig.now) else { return XCTFail() }
        XCTAssertEqual(rig.toCar(auth, link: LinkID(99)).cleartextFault, .unknownChallenge)
        XCTAssertNil(rig.toCar(auth).cleartextFault, "its own link still establishes")
    }

    func testALateAnswerNeverEstablishes() throws {
        var (rig, first, auth) = try expiredAnswer(sweep: true)
        XCTAssertEqual(first.cleartextFault, .challengeExpired)
        let again = rig.toCar(auth)
        XCTAssertEqual(again.cleartextFault, .challengeExpired)
        XCTAssertTrue(again.grants.isEmpty)
    }
}

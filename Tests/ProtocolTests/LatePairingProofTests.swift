// Rule Q2 must not depend on timing either: a PairingProof that arrives after its
// PairingChallenge expired, on the link that still holds it, is `challengeExpired` with the
// phone key's ID whether or not the engine's housekeeping swept the attempt first (an
// independent phone saw `unexpectedMessage` 10.5 s after the challenge, once the agent's tick
// had run). The memory lasts until the link ends and never reaches another link.
import XCTest
@testable import Protocol

final class LatePairingProofTests: XCTestCase {
    private let link = LinkID(91)

    private func lateProof(sweep: Bool) throws -> (rig: KeysRig, proof: Bytes) {
        var rig = KeysRig(owners: [])
        let (code, _) = try rig.car.openPairingWindow(now: rig.now)
        var phone = PhonePairingSession(longTermKey: KeysFixtures.owner, code: code)
        let challenge = try XCTUnwrap(rig.toCar(try phone.start(), link: link).sent.first)
        guard case .send(let proof) = try phone.receive(challenge) else {
            XCTFail("phone did not answer")
            throw PhoneError.notEstablished
        }
        rig.advance(seconds: 10.5)
        if sweep { _ = rig.car.tick(now: rig.now) }
        return (rig, proof)
    }

    func testLateProofAfterTheSweepIsChallengeExpiredWithThePhoneKey() throws {
        var (rig, proof) = try lateProof(sweep: true)
        let actions = rig.toCar(proof, link: link)
        XCTAssertEqual(actions.cleartextFault, .challengeExpired)
        XCTAssertEqual(actions.audits.first?.fault, .challengeExpired)
        XCTAssertEqual(actions.audits.first?.keyID, KeyID(publicKey: KeysFixtures.owner.publicKey))
        XCTAssertTrue(actions.enrollments.isEmpty)
    }

    func testLateProofBeforeTheSweepIsTheSame() throws {
        var (rig, proof) = try lateProof(sweep: false)
        let actions = rig.toCar(proof, link: link)
        XCTAssertEqual(actions.cleartextFault, .challengeExpired)
        XCTAssertEqual(actions.audits.first?.keyID, KeyID(publicKey: KeysFixtures.owner.publicKey))
    }

    func testTheAnswerStaysUntilTheLinkEnds() throws {
        var (rig, proof) = try lateProof(sweep: true)
        XCTAssertEqual(rig.toCar(proof, link: link).cleartextFault, .challengeExpired)
        XCTAssertEqual(rig.toCar(proof, link: link).cleartextFault, .challengeExpired, "still remembered")
        XCTAssertEqual(rig.toCar(proof, link: LinkID(92)).cleartextFault, .unexpectedMessage, "another link has no challenge")
        _ = rig.car.linkClosed(link, now: rig.now)
        XCTAssertTrue(rig.car.expiredPairings.isEmpty, "forgotten with its link")
        XCTAssertEqual(rig.toCar(proof, link: link).cleartextFault, .unexpectedMessage, "a new link of the same number")
    }

    func testANewHelloOnTheLinkEndsTheMemory() throws {
        var (rig, proof) = try lateProof(sweep: true)
        var phone = rig.phone(KeysFixtures.owner)
        _ = rig.toCar(try phone.session.start(), link: link)
        XCTAssertEqual(rig.toCar(proof, link: link).cleartextFault, .unexpectedMessage)
    }

    func testTheMemoryIsBounded() throws {
        var rig = KeysRig(owners: [])
        let cap = rig.car.configuration.rateLimitedLinkMemory
        for index in 0..<(cap + 10) {
            rig.car.rememberExpiredPairing(on: LinkID(UInt64(1000 + index)), keyID: KeyID(publicKey: KeysFixtures.owner.publicKey))
        }
        XCTAssertEqual(rig.car.expiredPairings.count, cap)
        XCTAssertNil(rig.car.expiredPairings[LinkID(1000)], "the oldest link goes first")
    }
}

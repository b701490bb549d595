// Findings of the security review of the car-side decision code, each pinned by a test.
import XCTest
@testable import Protocol

final class SecurityReviewTests: XCTestCase {
    let guestID = KeyID(publicKey: KeysFixtures.guest.publicKey)
    let ownerID = KeyID(publicKey: KeysFixtures.owner.publicKey)

    /// Applies a revocation to the keychain the way the cloud path does, but without the
    /// `terminateSessions(revokedBy:)` call: a missed termination. docs/protocol.md 18.5 says
    /// the engine must refuse the key anyway, since every command looks the key up again.
    func applyWithoutTermination(_ rig: inout KeysRig, _ target: RevocationTarget,
                                 issuer: P256PrivateKey = KeysFixtures.owner) throws {
        let bytes = try KeysFixtures.revocation(target, issuer: issuer)
        let verified = try RevocationValidator.verify(bytes, vehicleID: Fixtures.vehicleID, keys: rig.keychain)
        let now = rig.now
        _ = try rig.keychain.update { (keychain: inout Keychain) throws(FaultCode) -> RevocationOutcome in
            try keychain.apply(verified, now: now)
        }
    }

    /// A guest handshake straight to the engine (no agent), so the share is not remembered.
    func unrememberedGuest(_ rig: inout KeysRig) throws -> KeysPhone {
        var guest = rig.phone(KeysFixtures.guest, certificate: try KeysFixtures.share().encoded())
        let challenge = try XCTUnwrap(rig.car.receive(try guest.session.start(), from: guest.link, now: rig.now).sent.first)
        guard case .send(let auth) = try guest.session.receive(challenge, now: rig.now) else { throw PhoneError.notEstablished }
        let accepted = try XCTUnwrap(rig.car.receive(auth, from: guest.link, now: rig.now).sent.first)
        _ = try guest.session.receive(accepted, now: rig.now)
        XCTAssertTrue(guest.session.isEstablished)
        XCTAssertNil(rig.keychain.lookup(guestID))
        return guest
    }

    func response(_ actions: [CarAction], _ phone: inout KeysPhone, now: ProtocolTime) throws -> ResponseBody {
        let bytes = try XCTUnwrap(actions.sent(to: phone.link).first, "no Response: \(actions)")
        guard case .response(let body) = try phone.session.receive(bytes, now: now) else { throw PhoneError.notEstablished }
        return body
    }

    // MARK: Finding 1: a share key not yet remembered was never checked again (rules A6, S7)

    func testRevokedSerialRefusesTheNextCommandOfAnUnrememberedShare() throws {
        var rig = KeysRig()
        var guest = try unrememberedGuest(&rig)
        try applyWithoutTermination(&rig, .serial(KeysFixtures.serial))

        let actions = rig.car.receive(try guest.session.command(.unlock, now: rig.now), from: guest.link, now: rig.now)
        XCTAssertTrue(actions.performs.isEmpty, "a revoked share must not unlock")
        XCTAssertEqual(try response(actions, &guest, now: rig.now).fault, .revoked)
        XCTAssertTrue(rig.car.establishedLinks.isEmpty, "the session ends after revoked")
    }

    func testRevokedIssuerRefusesTheNextCommandOfAnUnrememberedShare() throws {
        var rig = KeysRig(owners: [KeysFixtures.owner, KeysFixtures.secondOwner])
        var guest = try unrememberedGuest(&rig)
        try applyWithoutTermination(&rig, .key(ownerID), issuer: KeysFixtures.secondOwner)

        let actions = rig.car.receive(try guest.session.command(.unlock, now: rig.now), from: guest.link, now: rig.now)
        XCTAssertTrue(actions.performs.isEmpty, "a share of a revoked owner must not unlock")
        XCTAssertEqual(try response(actions, &guest, now: rig.now).fault, .revoked)
    }

    func testRevokedSerialBetweenHelloAndAuthResponseRefusesTheHandshake() throws {
        var rig = KeysRig()
        var guest = rig.phone(KeysFixtures.guest, certificate: try KeysFixtures.share().encoded())
        let challenge = try XCTUnwrap(rig.car.receive(try guest.session.start(), from: guest.link, now: rig.now).sent.first)
        try applyWithoutTermination(&rig, .serial(KeysFixtures.serial))
        guard case .send(let auth) = try guest.session.receive(challenge, now: rig.now) else { return XCTFail() }
        let actions = rig.car.receive(auth, from: guest.link, now: rig.now)
        XCTAssertTrue(actions.grants.isEmpty, "no session for a revoked share")
        XCTAssertEqual(actions.cleartextFault, .revoked)
    }

    func testAnUnrememberedShareStillWorksWhileNothingChanged() throws {
        var rig = KeysRig()
        var guest = try unrememberedGuest(&rig)
        let actions = rig.car.receive(try guest.session.command(.unlock, now: rig.now), from: guest.link, now: rig.now)
        XCTAssertEqual(actions.performs.count, 1)
    }

    // MARK: Finding 2: a refused proof with the right code left the window open

    /// A PairingProof whose code MAC is right but which the car refuses (here: it arrived after
    /// the 10 s challenge lifetime) has put the code in the clear: every input of the MAC is
    /// in the PairingHello and PairingChallenge, so a listener finds the 6 digits offline.
    /// The window must close, or the listener enrolls its own key as an owner with the code.
    func testALateProofWithTheRightCodeClosesTheWindow() throws {
        var rig = KeysRig(owners: [])
        let (code, _) = try rig.car.openPairingWindow(now: rig.now)
        var phone = PhonePairingSession(longTermKey: KeysFixtures.owner, code: code)
        let link = LinkID(91)
        let challengeBytes = try XCTUnwrap(rig.toCar(try phone.start(), link: link).sent.first)
        guard case .send(let proofBytes) = try phone.receive(challengeBytes) else { return XCTFail() }
        rig.advance(seconds: 11)
        let late = rig.toCar(proofBytes, link: link)
        XCTAssertEqual(late.cleartextFault, .challengeExpired)
        XCTAssertFalse(rig.car.isPairingWindowOpen(now: rig.now), "the code has been exposed")
        XCTAssertTrue(late.audits.contains { $0.event == .pairingWindowClosed })

        // What the listener can do with it: the MAC pins the code.
        let challenge = try PairingChallengeMessage.decode(challengeBytes)
        let proof = try PairingProofMessage.decode(proofBytes)
        XCTAssertEqual(PairingProofs.phoneMAC(code: code, phone: KeysFixtures.owner.publicKey.sec1,
                                              car: challenge.carIdentityPublicKey, challenge: challenge.challenge), proof.codeMAC)
        var thief = PhonePairingSession(longTermKey: KeysFixtures.guest, code: code)
        let answer = rig.toCar(try thief.start(), link: LinkID(92))
        XCTAssertEqual(answer.cleartextFault, .pairingClosed)
        XCTAssertTrue(rig.keychain.snapshot.listing.isEmpty, "nobody enrolled")
    }

    func testABadSignatureWithTheRightCodeClosesTheWindowButAWrongCodeDoesNot() throws {
        var rig = KeysRig(owners: [])
        let (code, _) = try rig.car.openPairingWindow(now: rig.now)
        var phone = PhonePairingSession(longTermKey: KeysFixtures.owner, code: code)
        let challengeBytes = try XCTUnwrap(rig.toCar(try phone.start(), link: LinkID(93)).sent.first)
        guard case .send(let proofBytes) = try phone.receive(challengeBytes) else { return XCTFail() }
        var tampered = proofBytes
        tampered[tampered.count - 1] ^= 0x01
        XCTAssertEqual(rig.toCar(tampered, link: LinkID(93)).cleartextFault, .badSignature)
        XCTAssertFalse(rig.car.isPairingWindowOpen(now: rig.now))

        // A slow phone with a wrong code exposes nothing: the window stays open.
        let (code2, _) = try rig.car.openPairingWindow(now: rig.now)
        let wrong = try PairingCode(code2.text == "000000" ? "000001" : "000000")
        var slow = PhonePairingSession(longTermKey: KeysFixtures.owner, code: wrong)
        let second = try XCTUnwrap(rig.toCar(try slow.start(), link: LinkID(94)).sent.first)
        guard case .send(let slowProof) = try slow.receive(second) else { return XCTFail() }
        rig.advance(seconds: 11)
        XCTAssertEqual(rig.toCar(slowProof, link: LinkID(94)).cleartextFault, .challengeExpired)
        XCTAssertTrue(rig.car.isPairingWindowOpen(now: rig.now))
    }
}

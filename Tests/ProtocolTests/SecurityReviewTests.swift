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

    // MARK: Finding 2 (pairing version 1): the code MAC let a listener find the code offline
    //
    // Version 2 replaced the MAC with SPAKE2+: nothing on the air tests a code guess, so a late
    // or badly signed proof with the right code no longer has to close the window.

    /// A man in the middle relays the genuine phone's PairingHello to the car and the car's
    /// PairingChallenge back, then keeps every byte: PairingHello, PairingChallenge and the
    /// phone's PairingProof. Under version 1 the proof's MAC pinned the code among 10^6. Now
    /// no candidate code, not even the right one, reproduces confirmV or confirmP from public
    /// bytes: each needs Z and V, which need x or y (discrete logs).
    func testARelayedExchangeDoesNotPinTheCodeOffline() throws {
        var rig = KeysRig(owners: [])
        let (code, _) = try rig.car.openPairingWindow(now: rig.now)
        var phone = PhonePairingSession(longTermKey: KeysFixtures.owner, code: code)
        let link = LinkID(91)
        let helloBytes = try phone.start()
        let challengeBytes = try XCTUnwrap(rig.toCar(helloBytes, link: link).sent.first)
        guard case .send(let proofBytes) = try phone.receive(challengeBytes) else { return XCTFail() }
        rig.advance(seconds: 11)
        XCTAssertEqual(rig.toCar(proofBytes, link: link).cleartextFault, .challengeExpired)
        XCTAssertTrue(rig.car.isPairingWindowOpen(now: rig.now), "nothing was exposed: the window stays open")

        // The listener's best offline test: guess the code, then try the keys it could compute.
        // Without x or y it must pick some scalar for them; the right code does not match.
        let hello = try PairingHelloMessage.decode(helloBytes)
        let challenge = try PairingChallengeMessage.decode(challengeBytes)
        let proof = try PairingProofMessage.decode(proofBytes)
        let ids = PairingSPAKE.identities(phone: hello.phonePublicKey, car: challenge.carIdentityPublicKey,
                                          vehicleID: challenge.vehicleID, windowID: challenge.windowID)
        let guessScalar = KAT.scalar("listener's guess of x")
        for candidate in [code, try PairingCode("000000"), try PairingCode("999999")] {
            let (w0, w1) = try PairingSPAKE.scalars(code: candidate)
            let asProver = try SPAKE2Plus.proverFinish(x: guessScalar, w0: w0, w1: w1, shareP: hello.shareP,
                                                       shareV: challenge.shareV, identities: ids)
            XCTAssertFalse(SPAKE2Plus.isValidConfirmation(challenge.confirmV, expected: asProver.confirmV))
            XCTAssertFalse(SPAKE2Plus.isValidConfirmation(proof.confirmP, expected: asProver.confirmP))
        }
        // The thief still needs the code online, and one attempt is one guess.
        var thief = PhonePairingSession(longTermKey: KeysFixtures.guest, code: try PairingCode(code.text == "000000" ? "000001" : "000000"))
        let answer = try XCTUnwrap(rig.toCar(try thief.start(), link: LinkID(92)).sent.first)
        XCTAssertEqual(try thief.receive(answer), .refused(FaultCode.wrongPairingCode.rawValue))
        XCTAssertEqual(rig.car.pairingWindow?.wrongCodesLeft, 3, "the phone's attempt and the thief's each spent one")
        XCTAssertTrue(rig.keychain.snapshot.listing.isEmpty, "nobody enrolled")
    }

    /// An active attacker posing as a phone chooses shareP with its guess g, and so can check
    /// the car's confirmV offline for g only: every PairingChallenge costs the window one
    /// guess, whether or not a PairingProof follows. Five guesses close the window.
    func testAnAttackerPosingAsAPhoneGetsOneGuessPerAttempt() throws {
        var rig = KeysRig(owners: [])
        let (code, _) = try rig.car.openPairingWindow(now: rig.now)
        let guesses = try (1...5).map { offset -> PairingCode in
            let value = (Int(code.text)! + offset) % 1_000_000
            return try PairingCode(String(repeating: "0", count: 6 - String(value).count) + String(value))
        }
        for (index, guess) in guesses.enumerated() {
            let x = KAT.scalar("attacker x \(index)")
            let (w0, w1) = try PairingSPAKE.scalars(code: guess)
            let shareP = try SPAKE2Plus.proverShare(x: x, w0: w0)
            let hello = try PairingHelloMessage(phonePublicKey: KeysFixtures.guest.publicKey.sec1, shareP: shareP).encoded()
            let link = LinkID(UInt64(200 + index))
            let challenge = try PairingChallengeMessage.decode(try XCTUnwrap(rig.toCar(hello, link: link).sent.first))
            let ids = PairingSPAKE.identities(phone: KeysFixtures.guest.publicKey.sec1, car: challenge.carIdentityPublicKey,
                                              vehicleID: challenge.vehicleID, windowID: challenge.windowID)
            let keys = try SPAKE2Plus.proverFinish(x: x, w0: w0, w1: w1, shareP: shareP, shareV: challenge.shareV, identities: ids)
            XCTAssertFalse(SPAKE2Plus.isValidConfirmation(challenge.confirmV, expected: keys.confirmV), "guess \(index) is wrong")
            XCTAssertEqual(rig.car.pairingWindow?.wrongCodesLeft, 4 - index, "the attempt was charged without a proof")
            if index < 4 { XCTAssertTrue(rig.car.linkClosed(link, now: rig.now).isEmpty) }
        }
        XCTAssertFalse(rig.car.isPairingWindowOpen(now: rig.now))
        // Nothing comes on the fifth link; its challenge expires and the window closes.
        rig.advance(seconds: 11)
        XCTAssertEqual(rig.car.tick(now: rig.now).audits.map(\.fault), [.wrongPairingCode])
        var owner = PhonePairingSession(longTermKey: KeysFixtures.owner, code: code)
        XCTAssertEqual(rig.toCar(try owner.start(), link: LinkID(250)).cleartextFault, .pairingClosed,
                       "even the right code: the window is gone")
    }
}

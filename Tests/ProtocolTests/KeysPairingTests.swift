// Owner enrollment through the pairing window, end to end: car engine, agent, phone.
import XCTest
@testable import Protocol

final class KeysPairingTests: XCTestCase {
    struct Attempt {
        var phone: PhonePairingSession
        let link: LinkID
    }

    /// Runs PairingHello -> PairingChallenge -> PairingProof -> (agent) -> PairingResult and
    /// returns the phone's final event, or the cleartext fault the car answered with.
    func pair(_ key: P256PrivateKey, code: PairingCode, rig: inout KeysRig, link: LinkID = LinkID(50),
              file: StaticString = #filePath, line: UInt = #line) throws -> PhonePairingSession.Event {
        var phone = PhonePairingSession(longTermKey: key, code: code, expectedVehicleID: Fixtures.vehicleID)
        let first = rig.toCar(try phone.start(), link: link)
        let challenge = try XCTUnwrap(first.sent(to: link).first, "no answer to PairingHello", file: file, line: line)
        let event = try phone.receive(challenge)
        guard case .send(let proof) = event else { return event }
        let second = rig.toCar(proof, link: link)
        let result = try XCTUnwrap(second.sent(to: link).first, "no answer to PairingProof: \(second)", file: file, line: line)
        return try phone.receive(result)
    }

    func fault(_ event: PhonePairingSession.Event) -> FaultCode? {
        if case .refused(let code) = event { return FaultCode(rawValue: code) }
        return nil
    }

    func wrongCode(_ code: PairingCode) -> PairingCode {
        let value = (Int(code.text)! + 1) % 1_000_000
        let text = String(value)
        return try! PairingCode(String(repeating: "0", count: 6 - text.count) + text)
    }

    func testTheRightCodeEnrollsAnOwnerWhoCanThenUnlock() throws {
        var rig = KeysRig(owners: [])
        let (code, opened) = try rig.car.openPairingWindow(now: rig.now)
        XCTAssertEqual(opened.audits.map(\.event), [.pairingWindowOpened])
        XCTAssertEqual(opened.audits.first?.link, .car)
        XCTAssertEqual(rig.car.isPairingWindowOpen(now: rig.now), true)
        XCTAssertFalse("\(code)".contains(code.text), "the code never appears in a description")

        let event = try pair(KeysFixtures.owner, code: code, rig: &rig)
        XCTAssertEqual(event, .paired(.init(carIdentityKey: Fixtures.carIdentity.publicKey, vehicleID: Fixtures.vehicleID)))
        let record = try XCTUnwrap(rig.keychain.lookup(KeyID(publicKey: KeysFixtures.owner.publicKey)))
        XCTAssertEqual(record.role, .owner)
        XCTAssertEqual(record.permissions, .all)
        XCTAssertTrue(rig.persisted.contains(.putKey(record)))
        XCTAssertFalse(rig.car.isPairingWindowOpen(now: rig.now), "single use")

        // The new owner pins the identity key it learned and opens a session.
        guard case .paired(let paired) = event else { return XCTFail() }
        var config = PhoneConfiguration(longTermKey: KeysFixtures.owner, paired: paired)
        config.ephemeralKeys = DerivedEphemeralKeys("paired phone")
        var phone = KeysPhone(session: PhoneProtocolSession(configuration: config), link: LinkID(77))
        XCTAssertEqual(try rig.connect(&phone).grants.first?.record.role, .owner)
        XCTAssertTrue(try rig.run(.unlock, on: &phone).isOK)
    }

    func testEnrollmentIsAudited() throws {
        var rig = KeysRig(owners: [])
        let (code, _) = try rig.car.openPairingWindow(now: rig.now)
        var phone = PhonePairingSession(longTermKey: KeysFixtures.owner, code: code)
        let link = LinkID(5)
        let challenge = try XCTUnwrap(rig.toCar(try phone.start(), link: link).sent.first)
        guard case .send(let proof) = try phone.receive(challenge) else { return XCTFail() }
        let actions = rig.toCar(proof, link: link)
        XCTAssertEqual(actions.audits.map(\.event), [.pairingWindowClosed, .ownerEnrolled])
        XCTAssertNil(actions.audits.first?.fault, "closed because it was used")
        XCTAssertEqual(actions.audits.last?.keyID, KeyID(publicKey: KeysFixtures.owner.publicKey))
        XCTAssertEqual(actions.enrollments.first?.link, link)
    }

    func testAWrongCodeIsRefusedAndCostsOneAttempt() throws {
        var rig = KeysRig(owners: [])
        let (code, _) = try rig.car.openPairingWindow(now: rig.now)
        XCTAssertEqual(fault(try pair(KeysFixtures.owner, code: wrongCode(code), rig: &rig)), .wrongPairingCode)
        XCTAssertNil(rig.keychain.lookup(KeyID(publicKey: KeysFixtures.owner.publicKey)))
        XCTAssertEqual(rig.car.pairingWindow?.wrongCodesLeft, 4)
        XCTAssertTrue(rig.car.isPairingWindowOpen(now: rig.now))
        if case .paired = try pair(KeysFixtures.owner, code: code, rig: &rig, link: LinkID(51)) {} else { XCTFail("right code after a wrong one") }
    }

    func testFiveWrongCodesCloseTheWindow() throws {
        var rig = KeysRig(owners: [])
        let (code, _) = try rig.car.openPairingWindow(now: rig.now)
        for attempt in 0..<5 {
            // Each from its own link, so the per-link rate limiter is not what stops them. The
            // phone aborts on the car's confirmV: the guess was spent when the car answered.
            XCTAssertTrue(rig.car.isPairingWindowOpen(now: rig.now), "attempt \(attempt)")
            let link = LinkID(UInt64(60 + attempt))
            XCTAssertEqual(fault(try pair(KeysFixtures.owner, code: wrongCode(code), rig: &rig, link: link)), .wrongPairingCode)
            XCTAssertEqual(rig.car.pairingWindow?.wrongCodesLeft, 4 - attempt)
            if attempt < 4 { _ = rig.car.linkClosed(link, now: rig.now) }
        }
        XCTAssertFalse(rig.car.isPairingWindowOpen(now: rig.now), "no guess left after the fifth")
        XCTAssertTrue(rig.car.tick(now: rig.now).audits.isEmpty, "the fifth attempt may still send its proof")
        XCTAssertEqual(rig.car.linkClosed(LinkID(64), now: rig.now).audits.map(\.fault), [.wrongPairingCode],
                       "closed as the fifth wrong attempt ends")
        XCTAssertNil(rig.car.pairingWindow)
        XCTAssertEqual(fault(try pair(KeysFixtures.owner, code: code, rig: &rig, link: LinkID(70))), .pairingClosed)
    }

    /// A wrong proof on the last guess closes the window at once.
    func testAWrongProofOnTheLastGuessClosesTheWindow() throws {
        var rig = KeysRig(owners: [], configure: { $0.pairing = PairingPolicy(maxWrongCodes: 1) })
        let (code, _) = try rig.car.openPairingWindow(now: rig.now)
        var phone = PhonePairingSession(longTermKey: KeysFixtures.owner, code: code)
        let link = LinkID(61)
        let challengeBytes = try XCTUnwrap(rig.toCar(try phone.start(), link: link).sent.first)
        guard case .send(let good) = try phone.receive(challengeBytes) else { return XCTFail() }
        // The same proof with confirmP altered (and signed again, so only the code is wrong).
        var confirmP = try PairingProofMessage.decode(good).confirmP
        confirmP[0] ^= 1
        let hello = try XCTUnwrap(phone.sentHello)
        let signature = try KeysFixtures.owner.signature(for: PairingSPAKE.possessionInput(
            pairingHello: hello, pairingChallenge: challengeBytes, confirmP: confirmP))
        let actions = rig.toCar(try PairingProofMessage(confirmP: confirmP, signature: signature.rawRepresentation).encoded(), link: link)
        XCTAssertEqual(actions.cleartextFault, .wrongPairingCode)
        XCTAssertEqual(actions.audits.filter { $0.event == .pairingWindowClosed }.map(\.fault), [.wrongPairingCode])
        XCTAssertNil(rig.car.pairingWindow)
        XCTAssertNil(rig.keychain.lookup(KeyID(publicKey: KeysFixtures.owner.publicKey)))
    }

    func testNoWindowExpiredWindowAndWindowExpiringMidway() throws {
        var rig = KeysRig(owners: [])
        XCTAssertEqual(fault(try pair(KeysFixtures.owner, code: try PairingCode("123456"), rig: &rig)), .pairingClosed)

        let (code, _) = try rig.car.openPairingWindow(now: rig.now)
        rig.advance(seconds: 60)
        XCTAssertFalse(rig.car.isPairingWindowOpen(now: rig.now), "60 s exactly is over")
        XCTAssertEqual(rig.car.tick(now: rig.now).audits.map(\.fault), [.pairingClosed])
        XCTAssertEqual(fault(try pair(KeysFixtures.owner, code: code, rig: &rig, link: LinkID(52))), .pairingClosed)

        var late = KeysRig(owners: [])
        let (lateCode, _) = try late.car.openPairingWindow(now: late.now)
        late.advance(seconds: 55)
        var phone = PhonePairingSession(longTermKey: KeysFixtures.owner, code: lateCode)
        let challenge = try XCTUnwrap(late.toCar(try phone.start(), link: LinkID(53)).sent.first)
        guard case .send(let proof) = try phone.receive(challenge) else { return XCTFail() }
        late.advance(seconds: 6)
        XCTAssertEqual(late.toCar(proof, link: LinkID(53)).cleartextFault, .pairingClosed)
        XCTAssertNil(late.keychain.lookup(KeyID(publicKey: KeysFixtures.owner.publicKey)))
    }

    func testTheWindowIsSingleUseAndACancelledWindowIsClosed() throws {
        var rig = KeysRig(owners: [])
        let (code, _) = try rig.car.openPairingWindow(now: rig.now)
        if case .paired = try pair(KeysFixtures.owner, code: code, rig: &rig) {} else { XCTFail() }
        XCTAssertEqual(fault(try pair(KeysFixtures.secondOwner, code: code, rig: &rig, link: LinkID(54))), .pairingClosed)

        let (second, _) = try rig.car.openPairingWindow(now: rig.now)
        XCTAssertEqual(rig.car.closePairingWindow(now: rig.now).audits.map(\.event), [.pairingWindowClosed])
        XCTAssertEqual(fault(try pair(KeysFixtures.secondOwner, code: second, rig: &rig, link: LinkID(55))), .pairingClosed)

        // Reopening replaces the code: the old one is dead.
        let (old, _) = try rig.car.openPairingWindow(now: rig.now)
        let (fresh, reopened) = try rig.car.openPairingWindow(now: rig.now)
        XCTAssertEqual(reopened.audits.map(\.event), [.pairingWindowClosed, .pairingWindowOpened])
        if old != fresh {
            XCTAssertEqual(fault(try pair(KeysFixtures.secondOwner, code: old, rig: &rig, link: LinkID(56))), .wrongPairingCode)
        }
        if case .paired = try pair(KeysFixtures.secondOwner, code: fresh, rig: &rig, link: LinkID(57)) {} else { XCTFail() }
        XCTAssertEqual(rig.keychain.snapshot.ownerCount, 2)
    }

    func testRateLimitPerLink() throws {
        var rig = KeysRig(owners: [], configure: { $0.pairing = PairingPolicy(maxWrongCodes: 50) })
        let (code, _) = try rig.car.openPairingWindow(now: rig.now)
        let link = LinkID(80)
        for _ in 0..<5 {
            XCTAssertEqual(fault(try pair(KeysFixtures.owner, code: wrongCode(code), rig: &rig, link: link)), .wrongPairingCode)
        }
        XCTAssertEqual(fault(try pair(KeysFixtures.owner, code: code, rig: &rig, link: link)), .rateLimited,
                       "the link is blocked after five failures, even with the right code")
        if case .paired = try pair(KeysFixtures.owner, code: code, rig: &rig, link: LinkID(81)) {} else { XCTFail("another link") }
    }

    func testABadPossessionSignatureIsRefused() throws {
        var rig = KeysRig(owners: [])
        let (code, _) = try rig.car.openPairingWindow(now: rig.now)
        // The right code, but signed by a key other than the one it asks to enroll. The guess
        // was spent with the challenge; confirmP exposes nothing, so the window stays open.
        var phone = PhonePairingSession(longTermKey: KeysFixtures.owner, code: code)
        let link = LinkID(90)
        let challengeBytes = try XCTUnwrap(rig.toCar(try phone.start(), link: link).sent.first)
        guard case .send(let good) = try phone.receive(challengeBytes) else { return XCTFail() }
        let confirmP = try PairingProofMessage.decode(good).confirmP
        let hello = try XCTUnwrap(phone.sentHello)
        let wrongSigner = try KeysFixtures.guest.signature(for: PairingSPAKE.possessionInput(
            pairingHello: hello, pairingChallenge: challengeBytes, confirmP: confirmP))
        let proof = try PairingProofMessage(confirmP: confirmP, signature: wrongSigner.rawRepresentation).encoded()
        XCTAssertEqual(rig.toCar(proof, link: link).cleartextFault, .badSignature)
        XCTAssertEqual(rig.car.pairingWindow?.wrongCodesLeft, 4)
        XCTAssertTrue(rig.car.isPairingWindowOpen(now: rig.now))
        XCTAssertEqual(rig.toCar(proof, link: link).cleartextFault, .unexpectedMessage, "the challenge was consumed")
    }

    func testChallengeLifetimeAndOrder() throws {
        var rig = KeysRig(owners: [])
        let (code, _) = try rig.car.openPairingWindow(now: rig.now)
        var phone = PhonePairingSession(longTermKey: KeysFixtures.owner, code: code)
        let challenge = try XCTUnwrap(rig.toCar(try phone.start(), link: LinkID(91)).sent.first)
        guard case .send(let proof) = try phone.receive(challenge) else { return XCTFail() }
        XCTAssertEqual(rig.toCar(proof, link: LinkID(92)).cleartextFault, .unexpectedMessage, "another link has no challenge")
        rig.advance(seconds: 11)
        XCTAssertEqual(rig.toCar(proof, link: LinkID(91)).cleartextFault, .challengeExpired)
        // Version 2: a late proof exposes nothing (confirmP is keyed by SPAKE2+), so the window
        // stays open with one guess spent.
        XCTAssertTrue(rig.car.isPairingWindowOpen(now: rig.now))
        XCTAssertEqual(rig.car.pairingWindow?.wrongCodesLeft, 4)
    }

    func testARevokedKeyCannotBeEnrolledAgainAndAFullKeychainIsRefused() throws {
        var rig = KeysRig(owners: [KeysFixtures.owner, KeysFixtures.secondOwner], capacity: 3)
        let guestID = KeyID(publicKey: KeysFixtures.guest.publicKey)
        let revocation = try RevocationValidator.verify(KeysFixtures.revocation(.key(guestID)), vehicleID: Fixtures.vehicleID,
                                                        keys: rig.keychain)
        _ = try rig.keychain.update { (k: inout Keychain) throws(FaultCode) in try k.apply(revocation, now: Fixtures.time()) }
        var (code, _) = try rig.car.openPairingWindow(now: rig.now)
        // The car does not know the guest key as a record, only its revocation: the agent's
        // enroll refuses it, and the phone hears it in the PairingResult.
        XCTAssertEqual(fault(try pair(KeysFixtures.guest, code: code, rig: &rig)), .revoked)
        XCTAssertEqual(rig.agentFaults, [.revoked])

        (code, _) = try rig.car.openPairingWindow(now: rig.now)
        if case .paired = try pair(KeysFixtures.otherGuest, code: code, rig: &rig, link: LinkID(58)) {} else { XCTFail() }
        (code, _) = try rig.car.openPairingWindow(now: rig.now)
        XCTAssertEqual(fault(try pair(Fixtures.key("OCK1 test fourth"), code: code, rig: &rig, link: LinkID(59))), .keychainFull)
        XCTAssertEqual(rig.keychain.snapshot.activeKeyCount, 3, "nothing evicted")
    }

    func testARevokedOwnerRecordIsRefusedAtPairingHello() throws {
        var rig = KeysRig(owners: [KeysFixtures.owner, KeysFixtures.secondOwner])
        let ownerID = KeyID(publicKey: KeysFixtures.owner.publicKey)
        let revocation = try RevocationValidator.verify(KeysFixtures.revocation(.key(ownerID), issuer: KeysFixtures.secondOwner),
                                                        vehicleID: Fixtures.vehicleID, keys: rig.keychain)
        _ = try rig.keychain.update { (k: inout Keychain) throws(FaultCode) in try k.apply(revocation, now: Fixtures.time()) }
        let (code, _) = try rig.car.openPairingWindow(now: rig.now)
        XCTAssertEqual(fault(try pair(KeysFixtures.owner, code: code, rig: &rig)), .revoked)
        XCTAssertTrue(rig.car.isPairingWindowOpen(now: rig.now))
    }

    func testTheFirstOwnerComesOnlyThroughPairing() throws {
        var rig = KeysRig(owners: [])
        var stranger = rig.phone(KeysFixtures.owner)
        XCTAssertEqual(try rig.connect(&stranger).cleartextFault, .unknownKey)
        // A self-signed "share" is no way in either: its issuer is not an enrolled owner.
        var selfShared = rig.phone(KeysFixtures.owner, certificate: try KeysFixtures.share(.full, holder: KeysFixtures.owner).encoded())
        XCTAssertEqual(try rig.connect(&selfShared).cleartextFault, .invalidCertificate)
        XCTAssertEqual(rig.keychain.snapshot.ownerCount, 0)
    }

    func testThePhoneRefusesACarThatCannotProveTheCode() throws {
        var rig = KeysRig(owners: [])
        let (code, _) = try rig.car.openPairingWindow(now: rig.now)
        var phone = PhonePairingSession(longTermKey: KeysFixtures.owner, code: code)
        let link = LinkID(93)
        let challenge = try XCTUnwrap(rig.toCar(try phone.start(), link: link).sent.first)
        // A tampered challenge (another identity key than the one that signed) is refused.
        var tampered = challenge
        tampered[40] ^= 1
        var copy = phone
        XCTAssertThrowsError(try copy.receive(tampered))
        guard case .send = try phone.receive(challenge) else { return XCTFail() }
        // An impostor's "success" without the right car MAC is not believed.
        let forged = try PairingResultMessage.success(carMAC: Bytes(repeating: 7, count: 32)).encoded()
        XCTAssertThrowsError(try phone.receive(forged)) { XCTAssertEqual($0 as? PhoneError, .pairingNotConfirmed) }
    }

    func testAWrongVehicleChallengeIsRefusedByThePhone() throws {
        var rig = KeysRig(owners: [])
        let (code, _) = try rig.car.openPairingWindow(now: rig.now)
        var phone = PhonePairingSession(longTermKey: KeysFixtures.owner, code: code, expectedVehicleID: KeysFixtures.otherVehicle)
        let challenge = try XCTUnwrap(rig.toCar(try phone.start(), link: LinkID(94)).sent.first)
        XCTAssertThrowsError(try phone.receive(challenge)) {
            XCTAssertEqual($0 as? PhoneError, .wrongVehicle(Fixtures.vehicleID.string))
        }
    }

    func testMessagesOnAnEnrollingLinkWaitAndPairingMessagesInASessionAreUnexpected() throws {
        var rig = KeysRig(owners: [])
        let (code, _) = try rig.car.openPairingWindow(now: rig.now)
        var phone = PhonePairingSession(longTermKey: KeysFixtures.owner, code: code)
        let link = LinkID(95)
        let challenge = try XCTUnwrap(rig.toCar(try phone.start(), link: link).sent.first)
        guard case .send(let proof) = try phone.receive(challenge) else { return XCTFail() }
        // Deliver without the agent, so the enrollment stays pending.
        let pending = rig.car.receive(proof, from: link, now: rig.now)
        let request = try XCTUnwrap(pending.enrollments.first)
        XCTAssertEqual(rig.car.receive(try phone.start(), from: link, now: rig.now).cleartextFault, .busy)
        // The link drops: the enrollment still completes and is audited; nothing is sent.
        _ = rig.car.linkClosed(link, now: rig.now)
        let done = rig.car.completeEnrollment(request.token, result: nil, now: rig.now)
        XCTAssertTrue(done.sent.isEmpty)
        XCTAssertEqual(done.audits.map(\.event), [.ownerEnrolled])
        XCTAssertTrue(rig.car.completeEnrollment(request.token, result: nil, now: rig.now).isEmpty, "once")

        var owner = rig.phone(KeysFixtures.secondOwner)
        _ = try rig.keychain.update { (k: inout Keychain) throws(FaultCode) in
            try k.enroll(KeysFixtures.enrollment(KeysFixtures.secondOwner), now: Fixtures.time())
        }
        try rig.connect(&owner)
        let inSession = rig.toCar(try PairingHelloMessage(phonePublicKey: KeysFixtures.guest.publicKey.sec1,
                                                          shareP: SPAKE2Plus.m).encoded(), link: owner.link)
        XCTAssertEqual(try rig.phoneResponse(inSession, phone: &owner).fault, .unexpectedMessage)
    }

    /// An app from before SPAKE2+ sends a version 1 PairingHello (67 bytes). The car answers
    /// `pairingVersion` ("update the app") and changes nothing: no guess spent, no rate-limit
    /// failure, no pairing state on the link.
    func testAnOldAppsPairingHelloGetsThePairingVersionFaultAndChangesNothing() throws {
        var rig = KeysRig(owners: [])
        let (code, _) = try rig.car.openPairingWindow(now: rig.now)
        let old = [MessageType.pairingHello.rawValue, 0x01] + KeysFixtures.owner.publicKey.sec1
        XCTAssertEqual(old.count, PairingHelloMessage.legacyLength)
        XCTAssertTrue(try PairingHelloMessage.decode(old).isLegacy)
        let link = LinkID(96)
        for _ in 0..<6 {
            let actions = rig.toCar(old, link: link)
            XCTAssertEqual(actions.cleartextFault, .pairingVersion)
            XCTAssertEqual(actions.audits.map(\.fault), [.pairingVersion])
            XCTAssertTrue(actions.enrollments.isEmpty)
        }
        XCTAssertEqual(rig.car.pairingWindow?.wrongCodesLeft, 5, "no guess spent")
        XCTAssertTrue(rig.car.isPairingWindowOpen(now: rig.now))
        XCTAssertEqual(FaultCode.pairingVersion.remediation.contains("Update the app"), true)
        // Six old hellos did not block the link: the updated app pairs on it.
        if case .paired = try pair(KeysFixtures.owner, code: code, rig: &rig, link: link) {} else { XCTFail("updated app") }
        // Other versions are refused as before; a version 1 proof is not understood at all.
        XCTAssertEqual(rig.toCar([MessageType.pairingHello.rawValue, 0x03] + KeysFixtures.owner.publicKey.sec1, link: LinkID(97)).cleartextFault,
                       .unsupportedVersion)
        XCTAssertThrowsError(try PairingProofMessage.decode([MessageType.pairingProof.rawValue, 0x01] + Bytes(repeating: 0, count: 96)))
    }

    /// A car that does not know the code (here even one holding the identity key) gets no
    /// PairingProof: the phone checks confirmV first.
    func testThePhoneSendsNothingToACarThatDoesNotKnowTheCode() throws {
        var rig = KeysRig(owners: [])
        let (code, _) = try rig.car.openPairingWindow(now: rig.now)
        // Another car engine (same identity key, as if stolen) with its own window and code.
        var impostor = KeysRig(owners: [], random: SeededRandom("impostor car"))
        let (other, _) = try impostor.car.openPairingWindow(now: impostor.now)
        XCTAssertNotEqual(other.text, code.text, "the seeds give different codes")
        var phone = PhonePairingSession(longTermKey: KeysFixtures.owner, code: code)
        let challenge = try XCTUnwrap(impostor.toCar(try phone.start(), link: LinkID(98)).sent.first)
        XCTAssertEqual(try phone.receive(challenge), .refused(FaultCode.wrongPairingCode.rawValue))
        XCTAssertThrowsError(try phone.receive(challenge), "the session is over")
    }

    func testCodeGenerationIsUniformByRejection() throws {
        // 4 293 999 999 is the largest accepted draw; 4 294 000 000 and above are drawn again.
        XCTAssertEqual(try PairingCode.generate(ScriptedRandom([Bytes(testHex: "fff13d7f")])).text, "999999")
        XCTAssertEqual(try PairingCode.generate(ScriptedRandom([Bytes(testHex: "fff13d80"), Bytes(testHex: "00000007")])).text, "000007")
        XCTAssertThrowsError(try PairingCode.generate(ScriptedRandom(Array(repeating: Bytes(testHex: "ffffffff"), count: 64))))
        XCTAssertThrowsError(try PairingCode.generate(FailingRandom()))
        // Every digit position is close to uniform over many codes.
        let random = SeededRandom("pairing codes")
        var counts = Array(repeating: Array(repeating: 0, count: 10), count: 6)
        for _ in 0..<20_000 {
            for (position, digit) in try PairingCode.generate(random).digits.enumerated() { counts[position][Int(digit - 0x30)] += 1 }
        }
        for position in counts { for count in position { XCTAssertTrue((1_700...2_300).contains(count), "\(count)") } }
        XCTAssertThrowsError(try PairingCode("12345"))
        XCTAssertThrowsError(try PairingCode("12345a"))
    }

    func testAFailingRandomSourceCannotOpenAWindow() throws {
        var car = CarProtocolEngine(configuration: CarProtocolConfiguration(vehicleID: Fixtures.vehicleID),
                                    identity: Fixtures.carIdentity, keys: InMemoryKeyDirectory(), random: FailingRandom())
        XCTAssertThrowsError(try car.openPairingWindow(now: Fixtures.time())) { XCTAssertEqual($0 as? FaultCode, .internalError) }
        XCTAssertFalse(car.isPairingWindowOpen(now: Fixtures.time()))
    }
}

extension KeysRig {
    /// The phone's view of the single encrypted Response sent to its link.
    mutating func phoneResponse(_ actions: [CarAction], phone: inout KeysPhone) throws -> ResponseBody {
        let bytes = try XCTUnwrap(actions.sent(to: phone.link).first, "no Response: \(actions)")
        guard case .response(let body) = try phone.session.receive(bytes, now: now) else { throw PhoneError.notEstablished }
        return body
    }
}

// The handshake end to end, and every way the car or the phone must refuse it.
import XCTest
@testable import Protocol

final class HandshakeTests: XCTestCase {
    // MARK: Happy path

    func testFullHandshakeAndUnlockWithFixedKeysAndInjectedClock() throws {
        var rig = Rig()
        let actions = try rig.handshake()
        XCTAssertEqual(actions.count, 3)
        let grant = try XCTUnwrap(actions.grants.first)
        XCTAssertEqual(grant.keyID, KeyID(publicKey: Fixtures.phoneKey.publicKey))
        XCTAssertEqual(grant.record.role, .owner)
        XCTAssertNil(grant.presentedCertificate)
        XCTAssertEqual(actions.audits.map(\.event), [.sessionEstablished])
        let info = try XCTUnwrap(rig.phone.sessionInfo)
        XCTAssertEqual(info.permissions, .all)
        XCTAssertEqual(info.carTime, UInt32(Fixtures.wallStart))
        XCTAssertTrue(info.clockTrusted)
        XCTAssertEqual(info.sessionLifetime, 300)
        XCTAssertEqual(rig.car.establishedLinks, [rig.link])

        let unlock = try rig.send(.unlock)
        let request = try XCTUnwrap(unlock.performs.first)
        XCTAssertEqual(unlock.count, 2, "nothing is sent before the agent completes")
        // The decision is audited before the actuation is asked for, so the host can make it
        // durable before the actuator moves.
        guard case .audit(let accepted) = unlock.first, case .perform = unlock.last else { return XCTFail("\(unlock)") }
        XCTAssertEqual([accepted.event], [.commandAccepted])
        XCTAssertEqual(accepted.command, .unlock)
        XCTAssertEqual(accepted.keyID, grant.keyID)
        XCTAssertNil(accepted.fault)
        XCTAssertEqual(request.command, .unlock)
        XCTAssertEqual(request.keyID, grant.keyID)
        rig.advance(seconds: 0.4)
        let done = rig.car.complete(request.token, result: nil, vehicleState: [.trunkLocked], now: rig.now)
        XCTAssertEqual(done.audits.map(\.event), [.commandCompleted])
        let response = try rig.phoneResponse(done)
        XCTAssertTrue(response.isOK)
        XCTAssertEqual(response.command, .unlock)
        XCTAssertEqual(response.vehicleState, [.trunkLocked])
        XCTAssertEqual(response.carTime, UInt32(Fixtures.wallStart))
        XCTAssertTrue(rig.car.complete(request.token, result: nil, vehicleState: [], now: rig.now).isEmpty,
                      "a token completes once")
    }

    func testRawSignatureEncodingIsAccepted() throws {
        var rig = Rig(encoding: .raw)
        let (_, challenge) = try rig.helloAndChallenge()
        guard case .send(let auth) = try rig.phone.receive(challenge, now: rig.now) else { return XCTFail() }
        XCTAssertEqual(auth.count, 39 + 64)
        XCTAssertFalse(rig.toCar(auth).grants.isEmpty)
    }

    func testOwnerKeyWorksOnUntrustedClock() throws {
        var rig = Rig(trusted: false)
        try rig.handshake()
        XCTAssertEqual(rig.phone.sessionInfo?.clockTrusted, false)
        XCTAssertTrue(try rig.run(.lock).isOK)
    }

    // MARK: Car-side refusals at Hello

    func testUnknownKey() throws {
        var rig = Rig(phoneKey: Fixtures.otherPhoneKey)
        let actions = rig.toCar(try rig.phone.start())
        XCTAssertEqual(actions.cleartextFault, .unknownKey)
        XCTAssertEqual(actions.audits.first?.fault, .unknownKey)
        XCTAssertEqual(actions.audits.first?.keyID, KeyID(publicKey: Fixtures.otherPhoneKey.publicKey))
    }

    func testRevokedKey() throws {
        var rig = Rig(record: KeyRecord(publicKey: Fixtures.phoneKey.publicKey, role: .shared, permissions: .unlock, revoked: true))
        XCTAssertEqual(rig.toCar(try rig.phone.start()).cleartextFault, .revoked)
    }

    func testExpiredAndNotYetValidKeys() throws {
        let t = UInt32(Fixtures.wallStart)
        var expired = Rig(record: KeyRecord(publicKey: Fixtures.phoneKey.publicKey, role: .shared, permissions: .unlock,
                                            notBefore: t - 100, notAfter: t - 1))
        XCTAssertEqual(expired.toCar(try expired.phone.start()).cleartextFault, .expired)
        var early = Rig(record: KeyRecord(publicKey: Fixtures.phoneKey.publicKey, role: .shared, permissions: .unlock,
                                          notBefore: t + 1, notAfter: t + 100))
        XCTAssertEqual(early.toCar(try early.phone.start()).cleartextFault, .notYetValid)
        var inside = Rig(record: KeyRecord(publicKey: Fixtures.phoneKey.publicKey, role: .shared, permissions: .unlock,
                                           notBefore: t, notAfter: t))
        XCTAssertNoThrow(try inside.handshake(), "window bounds are inclusive")
    }

    func testWindowedKeyOnUntrustedClockFailsClosed() throws {
        let t = UInt32(Fixtures.wallStart)
        var rig = Rig(record: KeyRecord(publicKey: Fixtures.phoneKey.publicKey, role: .shared, permissions: .unlock,
                                        notAfter: t + 3600), trusted: false)
        XCTAssertEqual(rig.toCar(try rig.phone.start()).cleartextFault, .clockNotTrusted)
    }

    func testUnsupportedVersionAndMalformedHello() throws {
        var rig = Rig()
        var hello = try rig.phone.start()
        hello[1] = 0x02
        XCTAssertEqual(rig.toCar(hello).cleartextFault, .unsupportedVersion)
        hello[1] = 0x01
        XCTAssertEqual(rig.toCar(Array(hello.prefix(40))).cleartextFault, .malformedMessage)
        XCTAssertEqual(rig.toCar(Bytes(repeating: 0x01, count: 1025)).cleartextFault, .malformedMessage)
        XCTAssertEqual(rig.toCar([0x42]).cleartextFault, .malformedMessage)
    }

    func testOffCurveEphemeralKeyIsMalformed() throws {
        var rig = Rig()
        var hello = try rig.phone.start()
        hello[74] ^= 0x01 // last byte of Y: the point leaves the curve
        XCTAssertEqual(rig.toCar(hello).cleartextFault, .malformedMessage)
    }

    func testUnexpectedMessagesBeforeSession() throws {
        var rig = Rig()
        let (_, challenge) = try rig.helloAndChallenge()
        XCTAssertEqual(rig.toCar(challenge).cleartextFault, .unexpectedMessage, "car does not accept Challenges")
        let record = try EncryptedRecord(type: .command, counter: 1, ciphertext: [1], tag: Bytes(repeating: 0, count: 16))
        XCTAssertEqual(rig.toCar(record.encoded()).cleartextFault, .unexpectedMessage)
        XCTAssertEqual(rig.toCar(FaultMessage(.busy).encoded()).cleartextFault, .unexpectedMessage)
    }

    func testBusyWhenLinkTableIsFull() throws {
        var rig = Rig(configure: { $0.maxLinks = 1 })
        _ = try rig.helloAndChallenge()
        var second = rig.phone
        XCTAssertEqual(rig.toCar(try second.start(), link: LinkID(99)).cleartextFault, .busy)
        // Once the first challenge has expired, its slot is reclaimed.
        rig.advance(seconds: 11)
        XCTAssertEqual(rig.toCar(try second.start(), link: LinkID(99)).sent.first?.first, MessageType.challenge.rawValue)
    }

    func testRandomSourceFailureIsInternalError() throws {
        var rig = Rig(random: FailingRandom())
        XCTAssertEqual(rig.toCar(try rig.phone.start()).cleartextFault, .internalError)
    }

    // MARK: Car-side refusals at AuthResponse

    func testTamperedSignatureIsRefusedAndConsumesTheChallenge() throws {
        var rig = Rig()
        let (_, challenge) = try rig.helloAndChallenge()
        guard case .send(let auth) = try rig.phone.receive(challenge, now: rig.now) else { return XCTFail() }
        var tampered = auth
        tampered[tampered.count - 3] ^= 0x01
        let refused = rig.toCar(tampered)
        XCTAssertEqual(refused.cleartextFault, .badSignature)
        XCTAssertTrue(refused.grants.isEmpty)
        XCTAssertEqual(rig.toCar(auth).cleartextFault, .reusedChallenge, "single use, also after failure")
    }

    func testSignatureOverOtherTimestampIsRefused() throws {
        var rig = Rig()
        let (_, challenge) = try rig.helloAndChallenge()
        guard case .send(let auth) = try rig.phone.receive(challenge, now: rig.now) else { return XCTFail() }
        var moved = auth
        moved[35] ^= 0x01 // timestamp is signed
        XCTAssertEqual(rig.toCar(moved).cleartextFault, .badSignature)
    }

    func testNonDERSignatureIsBadSignature() throws {
        var rig = Rig()
        let (_, challenge) = try rig.helloAndChallenge()
        guard case .send(let auth) = try rig.phone.receive(challenge, now: rig.now) else { return XCTFail() }
        let garbage = Array(auth.prefix(39)) + Bytes(repeating: 0x30, count: 70)
        XCTAssertEqual(rig.toCar(garbage).cleartextFault, .badSignature)
    }

    func testSignatureByAnotherKeyIsRefused() throws {
        var rig = Rig()
        let (_, challengeBytes) = try rig.helloAndChallenge()
        let challenge = try ChallengeMessage.decode(challengeBytes)
        let signed = AuthResponseMessage.signedData(challenge: challenge.challenge, timestamp: UInt32(Fixtures.wallStart))
        let forged = try AuthResponseMessage(challenge: challenge.challenge, timestamp: UInt32(Fixtures.wallStart),
                                             signature: Fixtures.otherPhoneKey.signature(for: signed).derRepresentation)
        XCTAssertEqual(rig.toCar(forged.encoded()).cleartextFault, .badSignature)
    }

    func testReplayedAuthResponseOnAnotherLinkIsReusedChallenge() throws {
        var rig = Rig()
        let (_, challenge) = try rig.helloAndChallenge()
        guard case .send(let auth) = try rig.phone.receive(challenge, now: rig.now) else { return XCTFail() }
        XCTAssertFalse(rig.toCar(auth).grants.isEmpty)
        // An eavesdropper replays the recorded AuthResponse on its own link, bare ...
        XCTAssertEqual(rig.toCar(auth, link: LinkID(66)).cleartextFault, .reusedChallenge)
        // ... and after its own Hello with the victim's key ID: still refused, nothing granted.
        var attacker = Rig().phone
        let attackerHello = rig.toCar(try attacker.start(), link: LinkID(67))
        XCTAssertEqual(attackerHello.sent.first?.first, MessageType.challenge.rawValue)
        let replay = rig.toCar(auth, link: LinkID(67))
        XCTAssertEqual(replay.cleartextFault, .reusedChallenge)
        XCTAssertTrue(replay.grants.isEmpty)
    }

    func testAuthResponseWithoutHelloIsUnknownChallenge() throws {
        var rig = Rig()
        let response = try AuthResponseMessage(challenge: Bytes(repeating: 9, count: 32), timestamp: 1,
                                               signature: Bytes(repeating: 1, count: 64))
        XCTAssertEqual(rig.toCar(response.encoded()).cleartextFault, .unknownChallenge)
    }

    func testAuthResponseBoundToAnotherHelloIsRefused() throws {
        // The victim handshakes on link 7; a relay opens link 8 with the victim's key ID and its
        // own ephemeral key, then forwards the victim's AuthResponse there.
        var rig = Rig()
        let (_, challenge) = try rig.helloAndChallenge()
        var relay = Rig().phone
        relay = PhoneProtocolSession(configuration: {
            var c = relay.configuration
            c.ephemeralKeys = DerivedEphemeralKeys("relay eph")
            return c
        }())
        let relayChallenge = rig.toCar(try relay.start(), link: LinkID(8))
        XCTAssertEqual(relayChallenge.sent.first?.first, MessageType.challenge.rawValue)
        guard case .send(let auth) = try rig.phone.receive(challenge, now: rig.now) else { return XCTFail() }
        let forwarded = rig.toCar(auth, link: LinkID(8))
        XCTAssertEqual(forwarded.cleartextFault, .unknownChallenge)
        XCTAssertTrue(forwarded.grants.isEmpty)
        XCTAssertFalse(rig.toCar(auth).grants.isEmpty, "the victim's own link is untouched")
    }

    func testChallengeExpires() throws {
        var rig = Rig()
        let (_, challenge) = try rig.helloAndChallenge()
        guard case .send(let auth) = try rig.phone.receive(challenge, now: rig.now) else { return XCTFail() }
        rig.advance(seconds: 10.001)
        XCTAssertEqual(rig.toCar(auth).cleartextFault, .challengeExpired)
        // Again on its own link: still expired (rule A1), as it is when the sweep ran first.
        XCTAssertEqual(rig.toCar(auth).cleartextFault, .challengeExpired)
        XCTAssertEqual(rig.toCar(auth, link: LinkID(42)).cleartextFault, .reusedChallenge, "elsewhere it is only 'used'")
    }

    func testChallengeAnsweredAtExactLifetimeIsAccepted() throws {
        var rig = Rig()
        let (_, challenge) = try rig.helloAndChallenge()
        guard case .send(let auth) = try rig.phone.receive(challenge, now: rig.now) else { return XCTFail() }
        rig.advance(seconds: 10)
        XCTAssertFalse(rig.toCar(auth).grants.isEmpty)
    }

    func testStaleTimestamp() throws {
        for (skew, accepted) in [(60.0, true), (-60.0, true), (61.0, false), (-61.0, false)] {
            var rig = Rig()
            let (_, challenge) = try rig.helloAndChallenge()
            var phoneNow = rig.now
            phoneNow.wallSeconds += Int64(skew)
            guard case .send(let auth) = try rig.phone.receive(challenge, now: phoneNow) else { return XCTFail() }
            let actions = rig.toCar(auth)
            XCTAssertEqual(actions.grants.isEmpty, !accepted, "skew \(skew)")
            if !accepted { XCTAssertEqual(actions.cleartextFault, .staleTimestamp) }
        }
    }

    func testTimestampNotCheckedOnUntrustedClock() throws {
        var rig = Rig(trusted: false)
        let (_, challenge) = try rig.helloAndChallenge()
        var phoneNow = rig.now
        phoneNow.wallSeconds += 86_400
        guard case .send(let auth) = try rig.phone.receive(challenge, now: phoneNow) else { return XCTFail() }
        XCTAssertFalse(rig.toCar(auth).grants.isEmpty)
    }

    func testRevocationBetweenHelloAndAuthResponse() throws {
        var rig = Rig()
        let (_, challenge) = try rig.helloAndChallenge()
        guard case .send(let auth) = try rig.phone.receive(challenge, now: rig.now) else { return XCTFail() }
        rig.directory.revoke(KeyID(publicKey: Fixtures.phoneKey.publicKey))
        XCTAssertEqual(rig.toCar(auth).cleartextFault, .revoked)
    }

    func testRejectedHelloKeepsThePendingHandshake() throws {
        var rig = Rig()
        let (_, challenge) = try rig.helloAndChallenge()
        var broken = try rig.phone.start()
        // restart the phone's view: answer the first challenge with a fresh phone state
        broken[1] = 0x09
        XCTAssertEqual(rig.toCar(broken).cleartextFault, .unsupportedVersion)
        var again = Rig()
        _ = try again.phone.start()
        guard case .send(let auth) = try again.phone.receive(challenge, now: rig.now) else { return XCTFail() }
        XCTAssertFalse(rig.toCar(auth).grants.isEmpty, "the refused Hello changed no state")
    }

    func testNewHelloReplacesPendingChallenge() throws {
        var rig = Rig()
        let (_, first) = try rig.helloAndChallenge()
        var oldPhone = rig.phone
        _ = try rig.helloAndChallenge()
        guard case .send(let oldAuth) = try oldPhone.receive(first, now: rig.now) else { return XCTFail() }
        XCTAssertEqual(rig.toCar(oldAuth).cleartextFault, .reusedChallenge)
    }

    // MARK: Phone-side refusals (mutual authentication)

    func testPhoneRefusesChallengeSignedOverSwappedEphemeral() throws {
        // A relay replaces the phone's ephemeral key in Hello with its own before the car sees it.
        var rig = Rig()
        var hello = try rig.phone.start()
        let relayKey = Fixtures.key("relay ephemeral")
        hello.replaceSubrange(10..<75, with: relayKey.publicKey.sec1)
        let challenge = try XCTUnwrap(rig.toCar(hello).sent.first)
        XCTAssertThrowsError(try rig.phone.receive(challenge, now: rig.now)) {
            XCTAssertEqual($0 as? PhoneError, .carSignatureInvalid)
        }
    }

    func testPhoneRefusesSwappedCarEphemeral() throws {
        var rig = Rig()
        let (_, challenge) = try rig.helloAndChallenge()
        var swapped = challenge
        swapped.replaceSubrange(34..<99, with: Fixtures.key("relay ephemeral").publicKey.sec1)
        XCTAssertThrowsError(try rig.phone.receive(swapped, now: rig.now)) {
            XCTAssertEqual($0 as? PhoneError, .carSignatureInvalid)
        }
        // The genuine Challenge still works afterwards: a refused message changes no state.
        guard case .send = try rig.phone.receive(challenge, now: rig.now) else { return XCTFail() }
    }

    func testPhoneRefusesTamperedCarSignatureAndOtherCar() throws {
        var rig = Rig()
        let (_, challenge) = try rig.helloAndChallenge()
        var tampered = challenge
        tampered[tampered.count - 1] ^= 0x80
        XCTAssertThrowsError(try rig.phone.receive(tampered, now: rig.now)) { XCTAssertEqual($0 as? PhoneError, .carSignatureInvalid) }
        // A car with another identity key, same vehicle ID.
        var impostor = Rig()
        impostor.car = CarProtocolEngine(configuration: CarProtocolConfiguration(vehicleID: Fixtures.vehicleID),
                                         identity: Fixtures.key("impostor identity"), keys: impostor.directory,
                                         random: SeededRandom("imp"))
        let (_, fake) = try impostor.helloAndChallenge()
        XCTAssertThrowsError(try impostor.phone.receive(fake, now: impostor.now)) { XCTAssertEqual($0 as? PhoneError, .carSignatureInvalid) }
    }

    func testPhoneRefusesWrongVehicleID() throws {
        var rig = Rig(configure: { $0.vehicleID = try! VehicleID("SOMEONE-ELSES-CAR") })
        let (_, challenge) = try rig.helloAndChallenge()
        XCTAssertThrowsError(try rig.phone.receive(challenge, now: rig.now)) {
            XCTAssertEqual($0 as? PhoneError, .wrongVehicle("SOMEONE-ELSES-CAR"))
        }
    }

    func testPhoneReportsCleartextFaultAndStops() throws {
        var rig = Rig(phoneKey: Fixtures.otherPhoneKey)
        let fault = try XCTUnwrap(rig.toCar(try rig.phone.start()).sent.first)
        XCTAssertEqual(try rig.phone.receive(fault, now: rig.now), .fault(FaultMessage(.unknownKey)))
        XCTAssertThrowsError(try rig.phone.command(.unlock, now: rig.now)) { XCTAssertEqual($0 as? PhoneError, .notEstablished) }
    }

    func testPhoneRefusesSessionAcceptedThatDoesNotDecrypt() throws {
        var rig = Rig()
        let (_, challenge) = try rig.helloAndChallenge()
        guard case .send(let auth) = try rig.phone.receive(challenge, now: rig.now) else { return XCTFail() }
        var accepted = try XCTUnwrap(rig.toCar(auth).sent.first)
        accepted[12] ^= 1
        XCTAssertThrowsError(try rig.phone.receive(accepted, now: rig.now)) { XCTAssertEqual($0 as? PhoneError, .decryptionFailed) }
    }
}

// Share certificates presented in Hello, end to end through the engine with a phone session:
// each permission level, and every reason the car must refuse one.
import XCTest
@testable import Protocol

final class KeysShareTests: XCTestCase {
    /// Connects the guest with `certificate`; returns the car's cleartext fault, nil on success.
    func presentFault(_ certificate: Bytes, rig: inout KeysRig, holder: P256PrivateKey = KeysFixtures.guest) throws -> FaultCode? {
        var phone = rig.phone(holder, certificate: certificate)
        let actions = try rig.connect(&phone)
        return actions.grants.isEmpty ? actions.cleartextFault : nil
    }

    func testEachLevelAllowsExactlyItsCommands() throws {
        let expectations: [(PermissionLevel, Set<CommandCode>)] = [
            (.full, [.unlock, .lock, .trunkRelease]),
            (.unlockOnly, [.unlock]),
            (.trunkOnly, [.trunkRelease]),
            (.lockOnly, [.lock]),
        ]
        for (level, allowed) in expectations {
            var rig = KeysRig()
            let certificate = try KeysFixtures.share(level).encoded()
            var phone = rig.phone(KeysFixtures.guest, certificate: certificate)
            let grant = try XCTUnwrap(try rig.connect(&phone).grants.first, "\(level)")
            XCTAssertEqual(grant.record.role, .shared)
            XCTAssertEqual(grant.record.permissions, level.permissions)
            XCTAssertEqual(grant.presentedCertificate, certificate)
            XCTAssertEqual(phone.session.sessionInfo?.role, .shared)
            for command in [CommandCode.unlock, .lock, .trunkRelease] {
                let response = try rig.run(command, on: &phone)
                if allowed.contains(command) {
                    XCTAssertTrue(response.isOK, "\(level) \(command)")
                } else {
                    XCTAssertEqual(response.fault, .insufficientPermission, "\(level) \(command)")
                }
            }
            XCTAssertTrue(try rig.run(.status, on: &phone).isOK, "\(level) status")
            XCTAssertEqual(try rig.run(.revoke, args: KeysFixtures.revocation(.key(phone.keyID)), on: &phone).fault,
                           .insufficientPermission, "\(level): shared keys never manage")
        }
    }

    func testTheCarRemembersTheKeyAfterProofOfPossession() throws {
        var rig = KeysRig()
        let certificate = try KeysFixtures.share(.unlockOnly).encoded()
        var phone = rig.phone(KeysFixtures.guest, certificate: certificate)
        try rig.connect(&phone)
        let remembered = try XCTUnwrap(rig.keychain.lookup(KeyID(publicKey: KeysFixtures.guest.publicKey)))
        XCTAssertEqual(remembered.share, ShareProvenance(serial: KeysFixtures.serial, issuer: KeyID(publicKey: KeysFixtures.owner.publicKey)))
        XCTAssertTrue(rig.persisted.contains(.putShare(KeysFixtures.serial, certificate: certificate)))
        XCTAssertTrue(rig.persisted.contains(.putKey(remembered)))
        XCTAssertEqual(rig.keychain.snapshot.activity(of: remembered.keyID)?.useCount, 1)

        // Next time the phone needs no certificate.
        var again = rig.phone(KeysFixtures.guest)
        XCTAssertNotNil(try rig.connect(&again).grants.first)
        XCTAssertEqual(rig.keychain.snapshot.activity(of: remembered.keyID)?.useCount, 2)
    }

    func testAHelloReplayWithoutTheHolderKeyIsNotRemembered() throws {
        var rig = KeysRig()
        let certificate = try KeysFixtures.share(.full).encoded()
        // The attacker copies the guest's key ID and certificate but signs with another key.
        var config = PhoneConfiguration(longTermKey: KeysFixtures.otherGuest, carIdentityKey: Fixtures.carIdentity.publicKey,
                                        vehicleID: Fixtures.vehicleID)
        config.shareCertificate = certificate
        let guestID = KeyID(publicKey: KeysFixtures.guest.publicKey)
        let hello = try HelloMessage(keyID: guestID, ephemeralPublicKey: Fixtures.key("eph").publicKey.sec1,
                                     shareCertificate: certificate).encoded()
        let challenge = try XCTUnwrap(rig.toCar(hello, link: LinkID(3)).sent.first)
        let parsed = try ChallengeMessage.decode(challenge)
        let signed = AuthResponseMessage.signedData(challenge: parsed.challenge, timestamp: UInt32(Fixtures.wallStart))
        let forged = try AuthResponseMessage(challenge: parsed.challenge, timestamp: UInt32(Fixtures.wallStart),
                                             signature: KeysFixtures.otherGuest.signature(for: signed).rawRepresentation)
        let actions = rig.toCar(forged.encoded(), link: LinkID(3))
        XCTAssertEqual(actions.cleartextFault, .badSignature)
        XCTAssertNil(rig.keychain.lookup(guestID))
    }

    func testExpiredAndNotYetValid() throws {
        var rig = KeysRig()
        let expired = try KeysFixtures.share(notBefore: KeysFixtures.dayBefore - 86_400, notAfter: KeysFixtures.dayBefore).encoded()
        XCTAssertEqual(try presentFault(expired, rig: &rig), .expired)
        let future = try KeysFixtures.share(notBefore: KeysFixtures.dayAfter, notAfter: KeysFixtures.dayAfter + 86_400).encoded()
        XCTAssertEqual(try presentFault(future, rig: &rig), .notYetValid)
        XCTAssertNil(rig.keychain.lookup(KeyID(publicKey: KeysFixtures.guest.publicKey)), "nothing remembered")
    }

    func testARememberedShareExpiresInTheMiddleOfItsSession() throws {
        var rig = KeysRig()
        let certificate = try KeysFixtures.share(.unlockOnly, notAfter: UInt32(Fixtures.wallStart + 100)).encoded()
        var phone = rig.phone(KeysFixtures.guest, certificate: certificate)
        try rig.connect(&phone)
        XCTAssertTrue(try rig.run(.unlock, on: &phone).isOK)
        rig.advance(seconds: 101)
        XCTAssertEqual(try rig.run(.unlock, on: &phone).fault, .expired)
        XCTAssertFalse(phone.session.isEstablished, "the session ends with the key's validity")
    }

    func testUntrustedClockRefusesTimeLimitedSharesButNotOwners() throws {
        var rig = KeysRig(trusted: false)
        XCTAssertEqual(try presentFault(try KeysFixtures.share().encoded(), rig: &rig), .clockNotTrusted)
        var owner = rig.phone(KeysFixtures.owner)
        XCTAssertNotNil(try rig.connect(&owner).grants.first)
        XCTAssertEqual(owner.session.sessionInfo?.clockTrusted, false)
        XCTAssertTrue(try rig.run(.unlock, on: &owner).isOK)
    }

    func testARememberedShareFailsClosedWhenTheClockBecomesUntrusted() throws {
        var rig = KeysRig()
        var phone = rig.phone(KeysFixtures.guest, certificate: try KeysFixtures.share().encoded())
        try rig.connect(&phone)
        rig.now.wallClockTrusted = false
        var again = rig.phone(KeysFixtures.guest)
        XCTAssertEqual(try rig.connect(&again).cleartextFault, .clockNotTrusted)
    }

    func testRevokedSerialRevokedHolderAndRevokedIssuer() throws {
        let revokeSerial = try Revocation.decode(KeysFixtures.revocation(.serial(KeysFixtures.serial)))
        var rig = KeysRig(owners: [KeysFixtures.owner, KeysFixtures.secondOwner])
        _ = try rig.keychain.update { (k: inout Keychain) throws(FaultCode) in
            try k.apply(VerifiedRevocation(revocation: revokeSerial, signedBytes: revokeSerial.encoded()), now: Fixtures.time())
        }
        XCTAssertEqual(try presentFault(try KeysFixtures.share().encoded(), rig: &rig), .revoked)

        var byKey = KeysRig(owners: [KeysFixtures.owner, KeysFixtures.secondOwner])
        let guestID = KeyID(publicKey: KeysFixtures.guest.publicKey)
        let revokeKey = try RevocationValidator.verify(KeysFixtures.revocation(.key(guestID)), vehicleID: Fixtures.vehicleID,
                                                       keys: byKey.keychain)
        _ = try byKey.keychain.update { (k: inout Keychain) throws(FaultCode) in try k.apply(revokeKey, now: Fixtures.time()) }
        XCTAssertEqual(try presentFault(try KeysFixtures.share().encoded(), rig: &byKey), .revoked)

        var byIssuer = KeysRig(owners: [KeysFixtures.owner, KeysFixtures.secondOwner])
        let revokeOwner = try RevocationValidator.verify(
            KeysFixtures.revocation(.key(KeyID(publicKey: KeysFixtures.owner.publicKey)), issuer: KeysFixtures.secondOwner),
            vehicleID: Fixtures.vehicleID, keys: byIssuer.keychain)
        _ = try byIssuer.keychain.update { (k: inout Keychain) throws(FaultCode) in try k.apply(revokeOwner, now: Fixtures.time()) }
        XCTAssertEqual(try presentFault(try KeysFixtures.share().encoded(), rig: &byIssuer), .revoked,
                       "shares of a revoked owner are not honoured")
    }

    func testEscalatingCertificatesAreInvalid() throws {
        var rig = KeysRig()
        for permissions: Permissions in [[.unlock, .manage], .manage, .all, Permissions(rawValue: 0x21), []] {
            let certificate = try KeysFixtures.signedShare(permissions: permissions)
            XCTAssertEqual(try presentFault(certificate, rig: &rig), .invalidCertificate, "\(permissions)")
        }
        XCTAssertThrowsError(try KeysFixtures.share(permissions: [.unlock, .manage]), "the issuer refuses to sign it")
    }

    func testCertificateAboveTheIssuersRightsIsInvalid() throws {
        // An owner record without trunk (a car configured that way) cannot grant trunk.
        var rig = KeysRig()
        rig.keychain.replace(with: Keychain(records: [KeyRecord(publicKey: KeysFixtures.owner.publicKey, role: .owner,
                                                                permissions: [.unlock, .lock, .manage])]))
        XCTAssertEqual(try presentFault(try KeysFixtures.share(.trunkOnly).encoded(), rig: &rig), .invalidCertificate)
        XCTAssertNil(try presentFault(try KeysFixtures.share(.lockOnly).encoded(), rig: &rig))
    }

    func testReSharingByASharedKeyIsInvalid() throws {
        var rig = KeysRig()
        var guest = rig.phone(KeysFixtures.guest, certificate: try KeysFixtures.share(.full).encoded())
        try rig.connect(&guest)
        XCTAssertEqual(rig.keychain.lookup(guest.keyID)?.role, .shared)
        // The guest (full level) signs a share for another phone.
        let reshared = try KeysFixtures.share(.unlockOnly, holder: KeysFixtures.otherGuest, issuer: KeysFixtures.guest,
                                              serial: ShareSerial(bytes: Bytes(repeating: 9, count: 8))).encoded()
        XCTAssertEqual(try presentFault(reshared, rig: &rig, holder: KeysFixtures.otherGuest), .invalidCertificate)
    }

    func testCertificateForAnotherVehicleUnknownIssuerOrAnotherHolder() throws {
        var rig = KeysRig()
        let other = try KeysFixtures.share(vehicleID: KeysFixtures.otherVehicle).encoded()
        XCTAssertEqual(try presentFault(other, rig: &rig), .wrongVehicle)
        let stranger = try KeysFixtures.share(issuer: Fixtures.key("OCK1 test stranger")).encoded()
        XCTAssertEqual(try presentFault(stranger, rig: &rig), .invalidCertificate)
        let forOther = try KeysFixtures.share(holder: KeysFixtures.otherGuest).encoded()
        XCTAssertEqual(try presentFault(forOther, rig: &rig), .invalidCertificate, "holder is not the Hello key")
    }

    func testTamperedCertificatesAreInvalid() throws {
        var rig = KeysRig(configure: {
            $0.rateLimit = RateLimitPolicy(failureThreshold: 1_000_000)
            $0.handshakeBudgetPerPeer = HandshakeBudget(perSecond: 1_000_000, burst: 1_000_000)
            $0.handshakeBudgetCarWide = HandshakeBudget(perSecond: 1_000_000, burst: 1_000_000)
        })
        let genuine = try KeysFixtures.share(.unlockOnly).encoded()
        let vehicleStart = 84, vehicleEnd = 84 + Fixtures.vehicleID.bytes.count
        for index in genuine.indices {
            var tampered = genuine
            tampered[index] ^= 0x01
            let fault = try presentFault(tampered, rig: &rig)
            // A flipped vehicle ID is reported as another vehicle; everything else as invalid.
            let expected: FaultCode = (vehicleStart..<vehicleEnd).contains(index) ? .wrongVehicle : .invalidCertificate
            XCTAssertEqual(fault, expected, "byte \(index)")
        }
        XCTAssertEqual(try presentFault(Array(genuine.dropLast()), rig: &rig), .invalidCertificate)
        XCTAssertEqual(try presentFault(genuine + [0], rig: &rig), .invalidCertificate)
        XCTAssertNil(rig.keychain.lookup(KeyID(publicKey: KeysFixtures.guest.publicKey)))
    }

    func testMaximumValidityPolicy() throws {
        var rig = KeysRig(policy: ShareCertificatePolicy(maxValiditySeconds: 86_400))
        XCTAssertEqual(try presentFault(try KeysFixtures.share().encoded(), rig: &rig), .invalidCertificate, "two days")
        let oneDay = try KeysFixtures.share(notBefore: KeysFixtures.dayBefore, notAfter: KeysFixtures.dayBefore + 86_400).encoded()
        XCTAssertNil(try presentFault(oneDay, rig: &rig))
    }

    func testKeychainFullRefusesANewShare() throws {
        var rig = KeysRig(capacity: 1)
        XCTAssertEqual(try presentFault(try KeysFixtures.share().encoded(), rig: &rig), .keychainFull)
        XCTAssertEqual(rig.keychain.snapshot.activeKeyCount, 1, "nothing was evicted")
        XCTAssertNotNil(rig.keychain.lookup(KeyID(publicKey: KeysFixtures.owner.publicKey)))
    }
}

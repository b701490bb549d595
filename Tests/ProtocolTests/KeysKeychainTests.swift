// The Keychain value: slots, enrollment, installation, revocation rules, reload, listing.
import XCTest
@testable import Protocol

final class KeysKeychainTests: XCTestCase {
    let now = Fixtures.time()

    func grant(for key: P256PrivateKey, certificate: ShareCertificate) -> AccessGrant {
        let record = KeyRecord(publicKey: key.publicKey, role: .shared, permissions: certificate.permissions,
                               notBefore: certificate.notBefore, notAfter: certificate.notAfter, share: certificate.provenance)
        return AccessGrant(link: LinkID(1), keyID: record.keyID, record: record, presentedCertificate: certificate.encoded(),
                           sessionLifetimeSeconds: 300, phoneTimestamp: 0)
    }

    func verified(_ target: RevocationTarget, issuer: P256PrivateKey = KeysFixtures.owner, in keychain: Keychain) throws -> VerifiedRevocation {
        try RevocationValidator.verify(KeysFixtures.revocation(target, issuer: issuer), vehicleID: Fixtures.vehicleID, keys: keychain)
    }

    func testSlotsAreBoundedAndNeverEvicted() throws {
        var keychain = Keychain(capacity: 2)
        XCTAssertEqual(Keychain().capacity, 32)
        _ = try keychain.enroll(KeysFixtures.enrollment(KeysFixtures.owner), now: now)
        _ = try keychain.enroll(KeysFixtures.enrollment(KeysFixtures.secondOwner), now: now)
        XCTAssertFalse(keychain.hasFreeSlot)
        XCTAssertThrowsError(try keychain.enroll(KeysFixtures.enrollment(KeysFixtures.guest), now: now)) {
            XCTAssertEqual($0 as? FaultCode, .keychainFull)
        }
        XCTAssertThrowsError(try keychain.install(grant(for: KeysFixtures.guest, certificate: KeysFixtures.share()), now: now)) {
            XCTAssertEqual($0 as? FaultCode, .keychainFull)
        }
        XCTAssertEqual(keychain.activeKeyCount, 2)
        XCTAssertEqual(try keychain.enroll(KeysFixtures.enrollment(KeysFixtures.owner), now: now), [], "re-enrolling is a no-op")
    }

    func testRevokedKeysFreeTheirSlot() throws {
        var keychain = KeysFixtures.keychain(capacity: 2)
        _ = try keychain.install(grant(for: KeysFixtures.guest, certificate: KeysFixtures.share()), now: now)
        XCTAssertFalse(keychain.hasFreeSlot)
        _ = try keychain.apply(verified(.serial(KeysFixtures.serial), in: keychain), now: now)
        XCTAssertTrue(keychain.hasFreeSlot)
        XCTAssertEqual(keychain.lookup(KeyID(publicKey: KeysFixtures.guest.publicKey))?.revoked, true, "kept, as revoked")
    }

    func testEnrollingASharedKeyMakesItAnOwner() throws {
        var keychain = KeysFixtures.keychain()
        _ = try keychain.install(grant(for: KeysFixtures.guest, certificate: KeysFixtures.share()), now: now)
        let changes = try keychain.enroll(KeysFixtures.enrollment(KeysFixtures.guest), now: now)
        XCTAssertEqual(keychain.lookup(KeyID(publicKey: KeysFixtures.guest.publicKey))?.role, .owner)
        XCTAssertEqual(keychain.lookup(KeyID(publicKey: KeysFixtures.guest.publicKey))?.share, nil)
        XCTAssertEqual(changes.count, 2)
    }

    func testInstallRefusals() throws {
        var keychain = KeysFixtures.keychain(owners: [KeysFixtures.owner, KeysFixtures.secondOwner])
        let certificate = try KeysFixtures.share()
        var noCertificate = grant(for: KeysFixtures.guest, certificate: certificate)
        noCertificate = AccessGrant(link: noCertificate.link, keyID: noCertificate.keyID, record: noCertificate.record,
                                    presentedCertificate: nil, sessionLifetimeSeconds: 300, phoneTimestamp: 0)
        XCTAssertThrowsError(try keychain.install(noCertificate, now: now)) { XCTAssertEqual($0 as? FaultCode, .invalidCertificate) }
        let byStranger = try KeysFixtures.share(issuer: Fixtures.key("OCK1 test stranger"))
        XCTAssertThrowsError(try keychain.install(grant(for: KeysFixtures.guest, certificate: byStranger), now: now)) {
            XCTAssertEqual($0 as? FaultCode, .invalidCertificate)
        }
        _ = try keychain.apply(verified(.key(KeyID(publicKey: KeysFixtures.owner.publicKey)), issuer: KeysFixtures.secondOwner,
                                        in: keychain), now: now)
        XCTAssertThrowsError(try keychain.install(grant(for: KeysFixtures.guest, certificate: certificate), now: now),
                             "the issuer was revoked since the Hello") { XCTAssertEqual($0 as? FaultCode, .revoked) }
        let unchanged = keychain
        XCTAssertEqual(keychain, unchanged)
    }

    func testApplyRules() throws {
        var keychain = KeysFixtures.keychain()
        let ownerID = KeyID(publicKey: KeysFixtures.owner.publicKey)
        let before = keychain
        XCTAssertThrowsError(try keychain.apply(verified(.key(ownerID), in: keychain), now: now)) {
            XCTAssertEqual($0 as? FaultCode, .lastOwnerKey)
        }
        XCTAssertEqual(keychain, before, "a refused revocation changes nothing")
        // A revocation of a key the car has never seen is kept for later.
        let unseen = KeyID(publicKey: KeysFixtures.otherGuest.publicKey)
        let outcome = try keychain.apply(verified(.key(unseen), in: keychain), now: now)
        XCTAssertEqual(outcome.revokedKeys, [])
        XCTAssertEqual(outcome.changes.count, 1)
        XCTAssertTrue(keychain.isRevoked(.key(unseen)))
        XCTAssertThrowsError(try keychain.install(grant(for: KeysFixtures.otherGuest, certificate: KeysFixtures.share(holder: KeysFixtures.otherGuest)),
                                                  now: now)) { XCTAssertEqual($0 as? FaultCode, .revoked) }
        XCTAssertThrowsError(try keychain.enroll(KeysFixtures.enrollment(KeysFixtures.otherGuest), now: now)) {
            XCTAssertEqual($0 as? FaultCode, .revoked)
        }
    }

    func testReloadReappliesRevocationsAndKeepsActivity() throws {
        var keychain = KeysFixtures.keychain(owners: [KeysFixtures.owner, KeysFixtures.secondOwner])
        _ = try keychain.install(grant(for: KeysFixtures.guest, certificate: KeysFixtures.share()), now: now)
        _ = keychain.recordUse(of: KeyID(publicKey: KeysFixtures.guest.publicKey), now: now.advanced(byMillis: 5_000))
        _ = try keychain.apply(verified(.serial(KeysFixtures.serial), in: keychain), now: now)

        // What the store holds, through the stored formats, with the revoked flag lost.
        var records = try keychain.listing.map { try KeyRecord(storedBytes: $0.record.storedBytes()) }
        for index in records.indices { records[index].revoked = false }
        let activities = try keychain.listing.compactMap(\.activity).map { try KeyActivity(storedBytes: $0.storedBytes()) }
        let revocations = try keychain.revocationEntries.map { try RevocationEntry(storedBytes: $0.storedBytes()) }
        let reloaded = Keychain(records: records, activities: activities, revocations: revocations)
        XCTAssertEqual(reloaded, keychain)
        XCTAssertEqual(reloaded.lookup(KeyID(publicKey: KeysFixtures.guest.publicKey))?.revoked, true)
        XCTAssertEqual(reloaded.activity(of: KeyID(publicKey: KeysFixtures.guest.publicKey))?.useCount, 1)
    }

    func testListingShowsOwnersFirstWithLevelsAndLastUse() throws {
        var keychain = KeysFixtures.keychain(owners: [KeysFixtures.owner, KeysFixtures.secondOwner])
        _ = try keychain.install(grant(for: KeysFixtures.guest, certificate: KeysFixtures.share(.trunkOnly)), now: now)
        let later = now.advanced(byMillis: 60_000)
        _ = keychain.recordUse(of: KeyID(publicKey: KeysFixtures.guest.publicKey), now: later)
        let listing = keychain.listing
        XCTAssertEqual(listing.map(\.record.role), [.owner, .owner, .shared])
        XCTAssertEqual(listing[2].level, .trunkOnly)
        XCTAssertEqual(listing[2].activity?.lastUsedAt, UInt32(later.wallSeconds))
        XCTAssertEqual(listing[2].activity?.lastUseTrusted, true)
        XCTAssertEqual(listing[2].activity?.enrolledAt, UInt32(now.wallSeconds))
        XCTAssertEqual(listing[0].activity?.lastUsedAt, 0, "never used")
        XCTAssertNil(listing[0].level, "owners hold more than any level")
    }

    func testPermissionLevelNames() {
        XCTAssertEqual(PermissionLevel.allCases.map(\.name), ["full", "unlock-only", "trunk-only", "lock-only"])
        XCTAssertEqual(PermissionLevel(name: "trunk-only"), .trunkOnly)
        XCTAssertNil(PermissionLevel(name: "owner"))
        XCTAssertEqual(PermissionLevel.full.permissions, [.unlock, .lock, .trunk, .remote])
        XCTAssertFalse(PermissionLevel.full.permissions.contains(.manage))
        XCTAssertEqual(PermissionLevel(permissions: .lock), .lockOnly)
        XCTAssertNil(PermissionLevel(permissions: [.lock, .unlock]))
        XCTAssertEqual(PermissionLevel.namesForHelp, "full, unlock-only, trunk-only or lock-only")
    }
}

// Revocations: the revoke command in an owner's session, its effect on open sessions, the
// cloud path, and every reason a revocation is refused.
import XCTest
@testable import Protocol

final class KeysRevocationTests: XCTestCase {
    let ownerID = KeyID(publicKey: KeysFixtures.owner.publicKey)
    let secondOwnerID = KeyID(publicKey: KeysFixtures.secondOwner.publicKey)
    let guestID = KeyID(publicKey: KeysFixtures.guest.publicKey)

    /// An owner session and a guest session (share remembered) on one car.
    func ownerAndGuest(owners: [P256PrivateKey] = [KeysFixtures.owner]) throws -> (KeysRig, KeysPhone, KeysPhone) {
        // Refusals are counted by the rate limiter; these tests make many on purpose.
        var rig = KeysRig(owners: owners, configure: { $0.rateLimit = RateLimitPolicy(failureThreshold: 1_000) })
        var owner = rig.phone(KeysFixtures.owner)
        try rig.connect(&owner)
        var guest = rig.phone(KeysFixtures.guest, certificate: try KeysFixtures.share(.full).encoded())
        try rig.connect(&guest)
        XCTAssertTrue(owner.session.isEstablished && guest.session.isEstablished)
        return (rig, owner, guest)
    }

    func testRevocationDuringAnOpenSessionEndsItAtOnce() throws {
        var (rig, owner, guest) = try ownerAndGuest()
        XCTAssertTrue(try rig.run(.unlock, on: &guest).isOK)

        var actions = rig.toCar(try owner.session.command(.revoke, args: KeysFixtures.revocation(.key(guestID)), now: rig.now),
                                link: owner.link)
        XCTAssertEqual(actions.revocations.first?.revocation.target, .key(guestID))
        // The owner gets ok; the guest gets a last Response with revoked, and its link closes.
        XCTAssertTrue(try rig.phoneResponse(actions, phone: &owner).isOK)
        XCTAssertEqual(try rig.phoneResponse(actions, phone: &guest).fault, .revoked)
        XCTAssertFalse(guest.session.isEstablished)
        XCTAssertEqual(actions.closed, [guest.link])
        XCTAssertTrue(actions.audits.contains { $0.event == .revocationApplied && $0.target == .key(guestID) })
        XCTAssertEqual(rig.car.establishedLinks, [owner.link])
        XCTAssertEqual(rig.keychain.lookup(guestID)?.revoked, true)
        XCTAssertTrue(rig.persisted.contains { if case .putRevocation(let e) = $0 { return e.target == .key(guestID) } else { return false } })

        // The guest cannot come back, with or without its certificate.
        var again = rig.phone(KeysFixtures.guest, certificate: try KeysFixtures.share(.full).encoded())
        XCTAssertEqual(try rig.connect(&again).cleartextFault, .revoked)
        XCTAssertTrue(try rig.run(.status, on: &owner).isOK, "the owner's session goes on")
    }

    func testRevocationBySerialEndsASessionOfANotYetRememberedShare() throws {
        var rig = KeysRig()
        var owner = rig.phone(KeysFixtures.owner)
        try rig.connect(&owner)
        // Handshake without the agent, so the share is not remembered yet.
        var guest = rig.phone(KeysFixtures.guest, certificate: try KeysFixtures.share().encoded())
        let challenge = try XCTUnwrap(rig.car.receive(try guest.session.start(), from: guest.link, now: rig.now).sent.first)
        guard case .send(let auth) = try guest.session.receive(challenge, now: rig.now) else { return XCTFail() }
        let accepted = try XCTUnwrap(rig.car.receive(auth, from: guest.link, now: rig.now).sent.first)
        _ = try guest.session.receive(accepted, now: rig.now)
        XCTAssertNil(rig.keychain.lookup(guestID))

        let actions = rig.toCar(try owner.session.command(.revoke, args: KeysFixtures.revocation(.serial(KeysFixtures.serial)),
                                                          now: rig.now), link: owner.link)
        XCTAssertTrue(try rig.phoneResponse(actions, phone: &owner).isOK)
        XCTAssertEqual(try rig.phoneResponse(actions, phone: &guest).fault, .revoked)
        XCTAssertEqual(rig.car.establishedLinks, [owner.link])
        XCTAssertTrue(rig.keychain.snapshot.isRevoked(.serial(KeysFixtures.serial)))
    }

    func testRevokingAnOwnerEndsItsSharesToo() throws {
        var (rig, owner, guest) = try ownerAndGuest(owners: [KeysFixtures.owner, KeysFixtures.secondOwner])
        var second = rig.phone(KeysFixtures.secondOwner)
        try rig.connect(&second)
        let actions = rig.toCar(try second.session.command(.revoke, args: KeysFixtures.revocation(.key(ownerID), issuer: KeysFixtures.secondOwner),
                                                           now: rig.now), link: second.link)
        XCTAssertTrue(try rig.phoneResponse(actions, phone: &second).isOK)
        XCTAssertEqual(try rig.phoneResponse(actions, phone: &owner).fault, .revoked)
        XCTAssertEqual(try rig.phoneResponse(actions, phone: &guest).fault, .revoked, "the revoked owner's share")
        XCTAssertEqual(rig.keychain.lookup(guestID)?.revoked, true)
        XCTAssertEqual(rig.car.establishedLinks, [second.link])
    }

    func testAnOwnerMayRevokeItselfWhileAnotherOwnerRemains() throws {
        var rig = KeysRig(owners: [KeysFixtures.owner, KeysFixtures.secondOwner])
        var owner = rig.phone(KeysFixtures.owner)
        try rig.connect(&owner)
        let actions = rig.toCar(try owner.session.command(.revoke, args: KeysFixtures.revocation(.key(ownerID)), now: rig.now),
                                link: owner.link)
        let bytes = actions.sent(to: owner.link)
        XCTAssertEqual(bytes.count, 2, "ok first, then the last Response")
        guard case .response(let ok) = try owner.session.receive(bytes[0], now: rig.now) else { return XCTFail() }
        XCTAssertTrue(ok.isOK)
        guard case .response(let last) = try owner.session.receive(bytes[1], now: rig.now) else { return XCTFail() }
        XCTAssertEqual(last.fault, .revoked)
        XCTAssertEqual(rig.keychain.snapshot.ownerCount, 1)
    }

    func testTheLastOwnerCannotBeRevoked() throws {
        var (rig, owner, _) = try ownerAndGuest()
        let actions = rig.toCar(try owner.session.command(.revoke, args: KeysFixtures.revocation(.key(ownerID)), now: rig.now),
                                link: owner.link)
        XCTAssertEqual(try rig.phoneResponse(actions, phone: &owner).fault, .lastOwnerKey)
        XCTAssertTrue(owner.session.isEstablished)
        XCTAssertEqual(rig.keychain.lookup(ownerID)?.revoked, false)
        XCTAssertFalse(rig.keychain.snapshot.isRevoked(.key(ownerID)), "nothing kept either")
        XCTAssertEqual(rig.car.establishedLinks.count, 2)
    }

    func testRefusedRevocationsKeepTheSession() throws {
        var (rig, owner, guest) = try ownerAndGuest()
        let cases: [(Bytes, FaultCode)] = [
            (try KeysFixtures.revocation(.key(guestID), vehicleID: KeysFixtures.otherVehicle), .wrongVehicle),
            (try KeysFixtures.revocation(.key(guestID), issuer: Fixtures.key("OCK1 test stranger")), .invalidRevocation),
            (try KeysFixtures.revocation(.key(ownerID), issuer: KeysFixtures.guest), .invalidRevocation),
            ([0x31, 0x01, 0x00], .malformedMessage),
            ([], .malformedMessage),
        ]
        for (args, expected) in cases {
            XCTAssertEqual(try rig.run(.revoke, args: args, on: &owner).fault, expected)
            XCTAssertTrue(owner.session.isEstablished)
        }
        var tampered = try KeysFixtures.revocation(.key(guestID))
        tampered[tampered.count - 20] ^= 1
        XCTAssertEqual(try rig.run(.revoke, args: tampered, on: &owner).fault, .invalidRevocation)
        var retargeted = try KeysFixtures.revocation(.key(guestID))
        retargeted[3 + Fixtures.vehicleID.bytes.count + 13] ^= 1
        XCTAssertEqual(try rig.run(.revoke, args: retargeted, on: &owner).fault, .invalidRevocation)
        var unknownVersion = try KeysFixtures.revocation(.key(guestID))
        unknownVersion[1] = 2
        XCTAssertEqual(try rig.run(.revoke, args: unknownVersion, on: &owner).fault, .unsupportedVersion)
        XCTAssertTrue(try rig.run(.unlock, on: &guest).isOK, "nothing was revoked")
        XCTAssertEqual(rig.keychain.snapshot.revocationCount, 0)
    }

    func testARevokedIssuersRevocationIsInvalid() throws {
        var rig = KeysRig(owners: [KeysFixtures.owner, KeysFixtures.secondOwner])
        let signedBySecond = try KeysFixtures.revocation(.key(guestID), issuer: KeysFixtures.secondOwner)
        let revokeSecond = try RevocationValidator.verify(KeysFixtures.revocation(.key(secondOwnerID)), vehicleID: Fixtures.vehicleID,
                                                          keys: rig.keychain)
        _ = try rig.keychain.update { (k: inout Keychain) throws(FaultCode) in try k.apply(revokeSecond, now: Fixtures.time()) }
        XCTAssertThrowsError(try RevocationValidator.verify(signedBySecond, vehicleID: Fixtures.vehicleID, keys: rig.keychain)) {
            XCTAssertEqual($0 as? FaultCode, .invalidRevocation)
        }
        var owner = rig.phone(KeysFixtures.owner)
        try rig.connect(&owner)
        XCTAssertEqual(try rig.run(.revoke, args: signedBySecond, on: &owner).fault, .invalidRevocation)
    }

    func testRevocationCarriedByAnotherOwnersSessionAndRevokedIdempotently() throws {
        var (rig, owner, guest) = try ownerAndGuest(owners: [KeysFixtures.owner, KeysFixtures.secondOwner])
        // The owner's session carries a revocation the second owner signed (e.g. made with `carkey revoke`).
        let signedBySecond = try KeysFixtures.revocation(.key(guestID), issuer: KeysFixtures.secondOwner)
        let actions = rig.toCar(try owner.session.command(.revoke, args: signedBySecond, now: rig.now), link: owner.link)
        XCTAssertTrue(try rig.phoneResponse(actions, phone: &owner).isOK)
        XCTAssertEqual(try rig.phoneResponse(actions, phone: &guest).fault, .revoked)
        let count = rig.persisted.count
        XCTAssertTrue(try rig.run(.revoke, args: signedBySecond, on: &owner).isOK, "again: ok, nothing new")
        XCTAssertEqual(rig.persisted.count, count)
    }

    func testACloudRevocationIsVerifiedAppliedAndEndsSessions() throws {
        var (rig, _, guest) = try ownerAndGuest()
        let bytes = try KeysFixtures.revocation(.serial(KeysFixtures.serial))
        let verified = try RevocationValidator.verify(bytes, vehicleID: Fixtures.vehicleID, keys: rig.keychain)
        let now = rig.now
        let outcome = try rig.keychain.update { (k: inout Keychain) throws(FaultCode) in try k.apply(verified, now: now) }
        XCTAssertEqual(outcome.revokedKeys, [guestID])
        let actions = rig.car.terminateSessions(revokedBy: verified.target, now: rig.now)
        XCTAssertEqual(try rig.phoneResponse(actions, phone: &guest).fault, .revoked)
        XCTAssertEqual(actions.closed, [guest.link])
        XCTAssertEqual(actions.audits.map(\.event), [.sessionClosed])
    }

    func testAPendingHandshakeOfARevokedKeyIsDropped() throws {
        var rig = KeysRig()
        var guest = rig.phone(KeysFixtures.guest, certificate: try KeysFixtures.share().encoded())
        let challenge = try XCTUnwrap(rig.toCar(try guest.session.start(), link: guest.link).sent.first)
        let actions = rig.car.terminateSessions(revokedBy: .serial(KeysFixtures.serial), now: rig.now)
        XCTAssertEqual(actions.closed, [guest.link])
        guard case .send(let auth) = try guest.session.receive(challenge, now: rig.now) else { return XCTFail() }
        XCTAssertEqual(rig.toCar(auth, link: guest.link).cleartextFault, .reusedChallenge)
    }

    func testACompletionAfterTheSessionEndedStillTerminatesTheTargets() throws {
        var (rig, owner, guest) = try ownerAndGuest()
        // Deliver without the agent; the owner's link drops before the agent completes.
        let pending = rig.car.receive(try owner.session.command(.revoke, args: KeysFixtures.revocation(.key(guestID)), now: rig.now),
                                      from: owner.link, now: rig.now)
        let request = try XCTUnwrap(pending.revocations.first)
        _ = rig.car.linkClosed(owner.link, now: rig.now)
        _ = try rig.keychain.update { (k: inout Keychain) throws(FaultCode) in try k.apply(request.revocation, now: Fixtures.time()) }
        let done = rig.car.complete(request.token, result: nil, vehicleState: [.locked], now: rig.now)
        XCTAssertEqual(done.audits.map(\.event), [.completionDropped, .revocationApplied, .sessionClosed])
        XCTAssertEqual(try rig.phoneResponse(done, phone: &guest).fault, .revoked)
    }
}

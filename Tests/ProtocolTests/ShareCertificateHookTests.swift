// The Hello certificate field and the verifier hook the keys issue will implement.
import XCTest
@testable import Protocol

/// Accepts certificates equal to `valid` for `holder`; anything else throws `refusal`.
struct StubVerifier: ShareCertificateVerifier {
    let valid: Bytes
    let holder: P256PublicKey
    var role: KeyRole = .shared
    var refusal: FaultCode = .invalidCertificate
    func verify(certificate: Bytes, keyID: KeyID, vehicleID: VehicleID, now: ProtocolTime) throws(FaultCode) -> KeyRecord {
        guard certificate == valid else { throw refusal }
        return KeyRecord(publicKey: holder, role: role, permissions: .unlock)
    }
}

final class ShareCertificateHookTests: XCTestCase {
    let guest = Fixtures.key("OCK1 test guest")
    let certificate: Bytes = Array("share certificate for the guest".utf8)

    func guestRig(verifier: (any ShareCertificateVerifier)?, certificate: Bytes) -> Rig {
        Rig(phoneKey: guest, configurePhone: { $0.shareCertificate = certificate }, verifier: verifier)
    }

    func testCertificateGrantsSessionAndIsReportedForRemembering() throws {
        var rig = guestRig(verifier: StubVerifier(valid: certificate, holder: guest.publicKey), certificate: certificate)
        let grant = try XCTUnwrap(try rig.handshake().grants.first)
        XCTAssertEqual(grant.presentedCertificate, certificate)
        XCTAssertEqual(grant.record.role, .shared)
        XCTAssertTrue(try rig.run(.unlock).isOK)
        XCTAssertEqual(try rig.run(.lock).fault, .insufficientPermission)
    }

    func testUnknownKeyWithoutCertificate() throws {
        var rig = guestRig(verifier: StubVerifier(valid: certificate, holder: guest.publicKey), certificate: [])
        XCTAssertEqual(rig.toCar(try rig.phone.start()).cleartextFault, .unknownKey)
    }

    func testCertificateWithoutVerifierIsInvalid() throws {
        var rig = guestRig(verifier: nil, certificate: certificate)
        XCTAssertEqual(rig.toCar(try rig.phone.start()).cleartextFault, .invalidCertificate)
    }

    func testVerifierRefusalsArePassedThrough() throws {
        for fault in [FaultCode.invalidCertificate, .wrongVehicle, .revoked, .expired] {
            var rig = guestRig(verifier: StubVerifier(valid: [0], holder: guest.publicKey, refusal: fault), certificate: certificate)
            XCTAssertEqual(rig.toCar(try rig.phone.start()).cleartextFault, fault)
        }
    }

    func testCertificateCannotCreateOwnerOrNameAnotherKey() throws {
        var owner = guestRig(verifier: StubVerifier(valid: certificate, holder: guest.publicKey, role: .owner), certificate: certificate)
        XCTAssertEqual(owner.toCar(try owner.phone.start()).cleartextFault, .invalidCertificate)
        var other = guestRig(verifier: StubVerifier(valid: certificate, holder: Fixtures.otherPhoneKey.publicKey), certificate: certificate)
        XCTAssertEqual(other.toCar(try other.phone.start()).cleartextFault, .invalidCertificate)
    }

    func testCertificateHolderMustStillProvePossession() throws {
        // Someone replays the guest's Hello (key ID + certificate) but cannot sign.
        var rig = guestRig(verifier: StubVerifier(valid: certificate, holder: guest.publicKey), certificate: certificate)
        let (_, challengeBytes) = try rig.helloAndChallenge()
        let challenge = try ChallengeMessage.decode(challengeBytes)
        let signed = AuthResponseMessage.signedData(challenge: challenge.challenge, timestamp: UInt32(Fixtures.wallStart))
        let forged = try AuthResponseMessage(challenge: challenge.challenge, timestamp: UInt32(Fixtures.wallStart),
                                             signature: Fixtures.phoneKey.signature(for: signed).rawRepresentation)
        let actions = rig.toCar(forged.encoded())
        XCTAssertEqual(actions.cleartextFault, .badSignature)
        XCTAssertTrue(actions.grants.isEmpty)
    }
}

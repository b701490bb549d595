// The signed-object codec (Sources/Protocol/Signing/SignedObject.swift): its shared checks once
// (signature length, label, signer, tampering, signing failures), then every one of the nine
// signed objects through it, against its documented known-answer bytes.
import XCTest
@testable import Protocol

final class SignedObjectTests: XCTestCase {
    private let owner = Fixtures.key("OCK1 signed object owner")
    private let other = Fixtures.key("OCK1 signed object other")
    private let vehicle = Fixtures.vehicleID

    private func revocation(by signer: P256PrivateKey) throws -> Revocation {
        try Revocation.issue(by: signer, vehicleID: vehicle, target: .key(KeyID(publicKey: other.publicKey)), issuedAt: 7)
    }

    private func failure(_ body: () throws(SignedObjectError) -> Void) -> SignedObjectError? {
        do throws(SignedObjectError) { try body(); return nil } catch { return error }
    }

    // MARK: The shared checks

    func testASignatureOfAnyOtherLengthIsRefusedWithTheFieldItsTypeNames() throws {
        let good = try revocation(by: owner)
        for length in [0, 63, 65, 72] {
            XCTAssertThrowsError(try Revocation(vehicleID: vehicle, issuerKeyID: good.issuerKeyID, issuedAt: 7, target: good.target,
                                                signature: Bytes(repeating: 1, count: length))) { error in
                XCTAssertEqual(error as? MessageFormatError, .invalidField(field: "signature", reason: "must be 64 bytes raw r || s"))
            }
        }
        // The car's challenges call the field carSignature, as their layouts do.
        XCTAssertThrowsError(try ChallengeMessage.checkSignature(Bytes(repeating: 1, count: 63))) { error in
            XCTAssertEqual(error as? MessageFormatError, .invalidField(field: "carSignature", reason: "must be 64 bytes raw r || s"))
        }
        XCTAssertThrowsError(try PairingChallengeMessage.checkSignature([])) { error in
            XCTAssertEqual(error as? MessageFormatError, .invalidField(field: "carSignature", reason: "must be 64 bytes raw r || s"))
        }
        XCTAssertNoThrow(try Revocation.checkSignature(Bytes(repeating: 0, count: 64)))
        // A decoder reads exactly 64 bytes: one short is truncated, one more is trailing.
        XCTAssertThrowsError(try Revocation.decode(Array(good.encoded().dropLast())))
        XCTAssertThrowsError(try Revocation.decode(good.encoded() + [0]))
    }

    func testTheSignedInputIsLabelContextBody() throws {
        let good = try revocation(by: owner)
        XCTAssertEqual(good.encoded(), good.body + good.signature)
        XCTAssertEqual(good.signatureInput, Array("OCK1-REVOCATION".utf8) + good.body)
        XCTAssertEqual(ChallengeMessage.signedInput(context: [1, 2], body: [3]), Array("OCK1-CHALLENGE".utf8) + [1, 2, 3])
        XCTAssertTrue(owner.publicKey.isValidSignature(try ECDSASignature(rawRepresentation: good.signature), for: good.signatureInput))
        XCTAssertNil(failure { () throws(SignedObjectError) in try good.verify(with: owner.publicKey) })
    }

    func testASignatureUnderAnotherLabelDoesNotVerify() throws {
        let good = try revocation(by: owner)
        // The same body signed under the revocation list's label: a valid signature, the wrong domain.
        let foreign = try owner.signature(for: RevocationList.signatureLabel + good.body).rawRepresentation
        let relabelled = try Revocation(vehicleID: vehicle, issuerKeyID: good.issuerKeyID, issuedAt: good.issuedAt, target: good.target,
                                        signature: foreign)
        XCTAssertEqual(failure { () throws(SignedObjectError) in try relabelled.verify(with: owner.publicKey) }, .badSignature)
    }

    func testOnlyTheNamedSignerVerifies() throws {
        let good = try revocation(by: owner)
        XCTAssertEqual(failure { () throws(SignedObjectError) in try good.verify(with: other.publicKey) }, .wrongSigner)
        // Signed by one key while naming another: the named key does not verify it, the signing
        // key is not the one named.
        let forged = try Revocation(vehicleID: vehicle, issuerKeyID: KeyID(publicKey: owner.publicKey), issuedAt: 7, target: good.target,
                                    signature: try other.signature(for: good.signatureInput).rawRepresentation)
        XCTAssertEqual(failure { () throws(SignedObjectError) in try forged.verify(with: owner.publicKey) }, .badSignature)
        XCTAssertEqual(failure { () throws(SignedObjectError) in try forged.verify(with: other.publicKey) }, .wrongSigner)
    }

    func testATamperedBodySignatureOrContextDoesNotVerify() throws {
        let good = try revocation(by: owner).encoded()
        // Every byte after the issuer key ID that still decodes: issuedAt, target kind and value.
        let issuedAt = 3 + vehicle.bytes.count + KeyID.length
        for index in issuedAt..<good.count {
            var altered = good
            altered[index] ^= 0x01
            guard let decoded = try? Revocation.decode(altered) else { continue }
            XCTAssertEqual(failure { () throws(SignedObjectError) in try decoded.verify(with: owner.publicKey) }, .badSignature,
                           "byte \(index)")
        }
        // A challenge verifies only over the very Hello it answers.
        let hello: Bytes = [1, 2, 3]
        let challenge = try ChallengeMessage.sign(by: owner, context: hello) { signature throws(MessageFormatError) in
            try ChallengeMessage(challenge: Bytes(repeating: 9, count: 32), carEphemeralPublicKey: other.publicKey.sec1,
                                 vehicleID: vehicle, signature: signature)
        }
        XCTAssertNil(failure { () throws(SignedObjectError) in try challenge.verify(with: owner.publicKey, context: hello) })
        XCTAssertEqual(failure { () throws(SignedObjectError) in try challenge.verify(with: owner.publicKey, context: [1, 2, 4]) },
                       .badSignature)
        XCTAssertEqual(failure { () throws(SignedObjectError) in try challenge.verify(with: other.publicKey, context: hello) },
                       .badSignature)
    }

    func testSigningChecksTheFieldsFirstAndReportsASignerThatFails() throws {
        let counting = CountingSigner(owner)
        XCTAssertThrowsError(try SignedConfig.issue(by: counting, vehicleID: vehicle, version: 0, issuedAt: 1, expiresAt: 2,
                                                    payload: Array("{}".utf8))) { error in
            XCTAssertEqual(error as? KeyObjectError, .invalid(.invalidField(field: "configVersion", reason: "must be at least 1")))
        }
        XCTAssertEqual(counting.signatures, 0, "a refused field is reported before anything is signed")
        XCTAssertThrowsError(try Revocation.issue(by: FailingSigner(publicKey: owner.publicKey), vehicleID: vehicle,
                                                  target: .key(KeyID(publicKey: other.publicKey)), issuedAt: 1)) { error in
            XCTAssertEqual(error as? KeyObjectError, .signingFailed)
        }
        _ = try Revocation.issue(by: counting, vehicleID: vehicle, target: .key(KeyID(publicKey: other.publicKey)), issuedAt: 1)
        XCTAssertEqual(counting.signatures, 1, "one signature per object")
    }

    // MARK: The nine signed objects

    /// `documented` decodes, encodes back byte for byte as body || signature, verifies with
    /// `key` over `context`; `reissued` (made again through the codec with the same fields and
    /// key) has the same body and verifies too.
    private func checkKnownAnswer<T: SignedObject & Equatable>(_ name: String, _ documented: Bytes, key: P256PublicKey, context: Bytes = [],
                                                               decode: (Bytes) throws -> T, reissued: (T) throws -> T,
                                                               file: StaticString = #filePath, line: UInt = #line) throws {
        let decoded = try decode(documented)
        XCTAssertEqual(decoded.encoded(), documented, name, file: file, line: line)
        XCTAssertEqual(decoded.body, Array(documented.dropLast(Wire.rawSignatureLength)), name, file: file, line: line)
        XCTAssertEqual(decoded.signature, Array(documented.suffix(Wire.rawSignatureLength)), name, file: file, line: line)
        XCTAssertNil(failure { () throws(SignedObjectError) in try decoded.verify(with: key, context: context) }, name, file: file, line: line)
        XCTAssertEqual(failure { () throws(SignedObjectError) in try decoded.verify(with: key, context: context + [0]) }, .badSignature,
                       name, file: file, line: line)
        let again = try reissued(decoded)
        XCTAssertEqual(again.body.hexString, decoded.body.hexString, name, file: file, line: line)
        XCTAssertNil(failure { () throws(SignedObjectError) in try again.verify(with: key, context: context) }, name, file: file, line: line)
        XCTAssertEqual(try decode(again.encoded()), again, name, file: file, line: line)
    }

    private func checkSignerNamed<T: SignerNamedObject>(_ object: T, _ key: P256PublicKey, file: StaticString = #filePath, line: UInt = #line) {
        XCTAssertEqual(object.signerKeyID, KeyID(publicKey: key), file: file, line: line)
        XCTAssertNil(failure { () throws(SignedObjectError) in try object.verify(with: key) }, file: file, line: line)
        XCTAssertEqual(failure { () throws(SignedObjectError) in try object.verify(with: self.other.publicKey) }, .wrongSigner,
                       file: file, line: line)
    }

    func testEveryTypeRoundTripsThroughTheCodecWithItsKnownAnswer() throws {
        func hex(_ table: [(String, String)], _ name: String) throws -> Bytes {
            Bytes(testHex: try XCTUnwrap(table.first { $0.0 == name }?.1, name))
        }
        var checked: [String] = []

        // 1. Remote command (docs/cloud.md).
        let remoteOwner = try P256PrivateKey(rawScalar: Bytes(hex: RemoteCommandTests.scalar)!)
        try checkKnownAnswer("remote command", Bytes(hex: RemoteCommandTests.bodyHex + RemoteCommandTests.signatureHex)!,
                             key: remoteOwner.publicKey, decode: RemoteCommand.decode) { command in
            let again = try RemoteCommand.issue(by: remoteOwner, commandID: command.commandID, vehicleID: command.vehicleID,
                                                action: command.action, issuedAt: command.issuedAt,
                                                lifetimeSeconds: command.expiresAt - command.issuedAt)
            checkSignerNamed(again, remoteOwner.publicKey)
            return again
        }
        checked.append(String(decoding: RemoteCommand.signatureLabel, as: UTF8.self))

        // 2. Signed configuration (docs/cloud.md).
        try checkKnownAnswer("signed config", Bytes(hex: ConfigKAT.body + ConfigKAT.signature)!, key: ConfigKAT.signer.publicKey,
                             decode: SignedConfig.decode) { document in
            let again = try SignedConfig.issue(by: ConfigKAT.signer, vehicleID: document.vehicleID, version: document.version,
                                               issuedAt: document.issuedAt, expiresAt: document.expiresAt, payload: document.payload)
            checkSignerNamed(again, ConfigKAT.signer.publicKey)
            return again
        }
        checked.append(String(decoding: SignedConfig.signatureLabel, as: UTF8.self))

        // 3. Revocation list (docs/cloud.md).
        try checkKnownAnswer("revocation list", Bytes(hex: RemoteCommandKeyObjectsTests.listBodyHex + RemoteCommandKeyObjectsTests.listSignatureHex)!,
                             key: remoteOwner.publicKey, decode: RevocationList.decode) { list in
            let again = try RevocationList.issue(by: remoteOwner, vehicleID: list.vehicleID, listVersion: list.listVersion, issuedAt: list.issuedAt,
                                                 revocations: try list.entries.map(Revocation.decode))
            checkSignerNamed(again, remoteOwner.publicKey)
            return again
        }
        checked.append(String(decoding: RevocationList.signatureLabel, as: UTF8.self))

        // 4. Fleet key grant (docs/cloud.md).
        try checkKnownAnswer("fleet key grant", Bytes(hex: RemoteCommandKeyObjectsTests.grantBodyHex + RemoteCommandKeyObjectsTests.grantSignatureHex)!,
                             key: remoteOwner.publicKey, decode: FleetKeyGrant.decode) { grant in
            let again = try FleetKeyGrant.issue(by: remoteOwner, vehicleID: grant.vehicleID, fleetKey: grant.fleetKey, issuedAt: grant.issuedAt)
            checkSignerNamed(again, remoteOwner.publicKey)
            return again
        }
        checked.append(String(decoding: FleetKeyGrant.signatureLabel, as: UTF8.self))

        // 5. Service authorisation (docs/protocol.md 18.13).
        try checkKnownAnswer("service authorisation", Bytes(hex: ServiceChallengeTests.answerPrefixHex + ServiceChallengeTests.signatureHex)!,
                             key: remoteOwner.publicKey, decode: ServiceAuthorisation.decode) { answer in
            let again = try ServiceAuthorisation.sign(answer.challenge, by: remoteOwner)
            checkSignerNamed(again, remoteOwner.publicKey)
            return again
        }
        checked.append(String(decoding: ServiceAuthorisation.signatureLabel, as: UTF8.self))

        // 6. Challenge, over the Hello it answers (docs/protocol.md, known-answer example).
        try checkKnownAnswer("challenge", try hex(KAT.expected, "Challenge"), key: KAT.carIdentity.publicKey,
                             context: try hex(KAT.expected, "Hello"), decode: ChallengeMessage.decode) { challenge in
            try ChallengeMessage.sign(by: KAT.carIdentity, context: try hex(KAT.expected, "Hello")) { signature throws(MessageFormatError) in
                try ChallengeMessage(challenge: challenge.challenge, carEphemeralPublicKey: challenge.carEphemeralPublicKey,
                                     vehicleID: challenge.vehicleID, signature: signature)
            }
        }
        checked.append(String(decoding: ChallengeMessage.signatureLabel, as: UTF8.self))

        // 7. Share certificate (docs/protocol.md 18.9).
        try checkKnownAnswer("share certificate", try hex(KeysKAT.expected, "share certificate"), key: KeysKAT.owner.publicKey,
                             decode: ShareCertificate.decode) { certificate in
            let again = try ShareCertificate.issue(by: KeysKAT.owner, holder: certificate.holderPublicKey, vehicleID: certificate.vehicleID,
                                                   permissions: certificate.permissions, notBefore: certificate.notBefore,
                                                   notAfter: certificate.notAfter, serial: certificate.serial)
            checkSignerNamed(again, KeysKAT.owner.publicKey)
            return again
        }
        checked.append(String(decoding: ShareCertificate.signatureLabel, as: UTF8.self))

        // 8. Pairing challenge, over the PairingHello it answers (docs/protocol.md 18.6).
        let pairingHello = try hex(PairingKAT.expected, "PairingHello")
        try checkKnownAnswer("pairing challenge", try hex(PairingKAT.expected, "PairingChallenge"), key: PairingKAT.carIdentity.publicKey,
                             context: pairingHello, decode: PairingChallengeMessage.decode) { challenge in
            try PairingChallengeMessage.sign(by: PairingKAT.carIdentity, context: pairingHello) { signature throws(MessageFormatError) in
                try PairingChallengeMessage(challenge: challenge.challenge, windowID: challenge.windowID,
                                            carIdentityPublicKey: challenge.carIdentityPublicKey, vehicleID: challenge.vehicleID,
                                            shareV: challenge.shareV, confirmV: challenge.confirmV, signature: signature)
            }
        }
        checked.append(String(decoding: PairingChallengeMessage.signatureLabel, as: UTF8.self))

        // 9. Revocation (docs/protocol.md 18.9).
        try checkKnownAnswer("revocation", try hex(KeysKAT.expected, "revocation"), key: KeysKAT.owner.publicKey,
                             decode: Revocation.decode) { revocation in
            let again = try Revocation.issue(by: KeysKAT.owner, vehicleID: revocation.vehicleID, target: revocation.target,
                                             issuedAt: revocation.issuedAt)
            checkSignerNamed(again, KeysKAT.owner.publicKey)
            return again
        }
        checked.append(String(decoding: Revocation.signatureLabel, as: UTF8.self))

        // Nine labels, all different, each a row of docs/protocol.md 18.11.
        XCTAssertEqual(Set(checked).count, 9)
        let doc = try XCTUnwrap(readRepositoryFile("docs/protocol.md"), "docs/protocol.md missing")
        XCTAssertTrue(Set(checked).isSubset(of: Set(SigningDomainTable.rows(in: doc).keys)))
    }
}

/// A signer whose key is out of reach (a token removed, a vault refusing).
private struct FailingSigner: ProtocolSigner {
    struct Unavailable: Error {}
    let publicKey: P256PublicKey
    func signature(for message: Bytes) throws -> ECDSASignature { throw Unavailable() }
}

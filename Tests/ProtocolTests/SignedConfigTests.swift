// Signed configuration documents (docs/cloud.md "Configuration (desired/reported)"): the
// known-answer example byte for byte, strict decoding, and every verification rule.
//
// ECDSA is randomized, so the example's signature is given: it is verified, not reproduced.
// To print a fresh example after an intentional format change:
//   OCK_PRINT_CONFIG_KAT=1 swift test --filter SignedConfigTests/testPrintExample
import XCTest
#if canImport(Glibc)
import Glibc
#endif
@testable import Protocol

enum ConfigKAT {
    /// The example's signer: the scalar 0x11 repeated 32 times (a test key, never a real one).
    static let signer = try! P256PrivateKey(rawScalar: Bytes(repeating: 0x11, count: 32))
    static let vehicleID = try! VehicleID("VIN0001")
    static let version: UInt64 = 3
    static let issuedAt: UInt32 = 1_760_000_000
    static let expiresAt: UInt32 = 1_760_086_400
    static let payload = Array(#"{"logLevel":"debug"}"#.utf8)
    static let signerKeyID = "2bad0fd610d99eae"
    static let body = "43010756494e303030312bad0fd610d99eae000000000000000368e7780068e8c98000147b226c6f674c6576656c223a226465627567227d"
    static let signature = "3c6986e6bd196dd534dedba842cfeb8595c697cc841f19261e4f3ec3e4ca4eb9ce8b65a87a3871ae6ae2cc343d0d017bc2e5ea077abc352c6c02ef2b1d85984d"
}

struct ConfigSigners: RemoteSignerDirectory {
    var signers: [RemoteSigner]
    func remoteSigner(_ keyID: KeyID) -> RemoteSigner? { signers.first { $0.keyID == keyID } }

    static func with(_ key: P256PrivateKey, kind: RemoteSigner.Kind, permissions: Permissions = .all) -> ConfigSigners {
        ConfigSigners(signers: [RemoteSigner(keyID: KeyID(publicKey: key.publicKey), publicKey: key.publicKey, kind: kind, permissions: permissions)])
    }
}

final class SignedConfigTests: XCTestCase {
    let now: Int64 = Int64(ConfigKAT.issuedAt) + 60

    func example() throws -> SignedConfig {
        try SignedConfig(vehicleID: ConfigKAT.vehicleID, signerKeyID: KeyID(publicKey: ConfigKAT.signer.publicKey),
                         version: ConfigKAT.version, issuedAt: ConfigKAT.issuedAt, expiresAt: ConfigKAT.expiresAt,
                         payload: ConfigKAT.payload, signature: Bytes(hex: ConfigKAT.signature)!)
    }

    func testPrintExample() throws {
        guard getenv("OCK_PRINT_CONFIG_KAT") != nil else { return }
        let document = try SignedConfig.issue(by: ConfigKAT.signer, vehicleID: ConfigKAT.vehicleID, version: ConfigKAT.version,
                                              issuedAt: ConfigKAT.issuedAt, expiresAt: ConfigKAT.expiresAt, payload: ConfigKAT.payload)
        print("signer public key \(ConfigKAT.signer.publicKey.sec1.hexString)")
        print("signer key ID \(document.signerKeyID)")
        print("body \(document.body.hexString)")
        print("signature \(document.signature.hexString)")
    }

    func testKnownAnswerExampleByteForByte() throws {
        let document = try example()
        XCTAssertEqual(document.signerKeyID.description, ConfigKAT.signerKeyID)
        XCTAssertEqual(document.body.hexString, ConfigKAT.body)
        XCTAssertEqual(document.signatureInput, Array("OCK1-CONFIG".utf8) + Bytes(hex: ConfigKAT.body)!)
        XCTAssertEqual(try SignedConfig.decode(document.encoded()), document)
        let signature = try ECDSASignature(rawRepresentation: document.signature)
        XCTAssertTrue(ConfigKAT.signer.publicKey.isValidSignature(signature, for: document.signatureInput))
        let verified = try SignedConfigVerifier.verify(document.encoded(), vehicleID: ConfigKAT.vehicleID,
                                                       signers: ConfigSigners.with(ConfigKAT.signer, kind: .fleet),
                                                       now: now, timeTrusted: true, currentVersion: 2)
        XCTAssertEqual(verified.document.payload, ConfigKAT.payload)
        XCTAssertEqual(verified.digest, SHA256.hash(document.encoded()))
    }

    /// docs/cloud.md shows the same example: its hex (spaces removed) is these bytes.
    func testTheDocumentedExampleMatches() throws {
        let doc = try XCTUnwrap(readRepositoryFile("docs/cloud.md"), "docs/cloud.md missing")
        guard let start = doc.range(of: "body      43 01"), let end = doc[start.lowerBound...].range(of: "```") else {
            return XCTFail("docs/cloud.md has no configuration example")
        }
        // Words that are all hex digits, joined: drops the "body" and "signature" labels.
        let words = doc[start.lowerBound..<end.lowerBound].split(whereSeparator: { $0.isWhitespace })
        let hex = words.filter { $0.allSatisfy(\.isHexDigit) }.joined()
        XCTAssertEqual(hex, ConfigKAT.body + ConfigKAT.signature)
        XCTAssertTrue(doc.contains(ConfigKAT.signerKeyID))
    }

    func testDecodingIsStrictAndBounded() throws {
        let bytes = try example().encoded()
        XCTAssertThrowsError(try SignedConfig.decode(bytes + [0])) { XCTAssertEqual($0 as? MessageFormatError, .trailingBytes(count: 1)) }
        XCTAssertThrowsError(try SignedConfig.decode(Array(bytes.dropLast())))
        XCTAssertThrowsError(try SignedConfig.decode([])) { XCTAssertEqual($0 as? MessageFormatError, .empty) }
        var wrongType = bytes; wrongType[0] = 0x40
        XCTAssertThrowsError(try SignedConfig.decode(wrongType))
        var wrongFormat = bytes; wrongFormat[1] = 0x02
        XCTAssertThrowsError(try SignedConfig.decode(wrongFormat)) { XCTAssertEqual($0 as? MessageFormatError, .unsupportedVersion(2)) }
        // payloadLen claims more than the bound: refused before anything is read.
        var long = bytes; let at = 3 + 7 + 8 + 8 + 4 + 4; long[at] = 0xff; long[at + 1] = 0xff
        XCTAssertThrowsError(try SignedConfig.decode(long))
        XCTAssertThrowsError(try SignedConfig.decode(Bytes(repeating: 0x42, count: SignedConfig.maxLength + 1))) {
            XCTAssertEqual($0 as? MessageFormatError, .oversized(length: SignedConfig.maxLength + 1, limit: SignedConfig.maxLength))
        }
        // Every truncation fails cleanly (no crash, no partial document).
        for length in 0..<bytes.count { XCTAssertThrowsError(try SignedConfig.decode(Array(bytes.prefix(length)))) }
    }

    func verify(_ bytes: Bytes, signers: ConfigSigners = .with(ConfigKAT.signer, kind: .fleet), now: Int64? = nil,
                trusted: Bool = true, current: UInt64 = 0) -> SignedConfigError? {
        do throws(SignedConfigError) {
            _ = try SignedConfigVerifier.verify(bytes, vehicleID: ConfigKAT.vehicleID, signers: signers, now: now ?? self.now,
                                                timeTrusted: trusted, currentVersion: current)
            return nil
        } catch { return error }
    }

    func testEveryVerificationRule() throws {
        let bytes = try example().encoded()
        XCTAssertNil(verify(bytes))
        XCTAssertNil(verify(bytes, signers: .with(ConfigKAT.signer, kind: .owner, permissions: [.manage])))
        XCTAssertEqual(verify(bytes, signers: .with(ConfigKAT.signer, kind: .owner, permissions: [.remote, .unlock])), .insufficientPermission)
        XCTAssertEqual(verify(bytes, signers: .with(ConfigKAT.signer, kind: .share)), .insufficientPermission)
        XCTAssertEqual(verify(bytes, signers: ConfigSigners(signers: [])), .unknownSigner)
        var altered = bytes; altered[bytes.count - 70] ^= 1   // inside the payload
        XCTAssertEqual(verify(altered), .badSignature)
        XCTAssertEqual(verify(bytes, now: Int64(ConfigKAT.expiresAt)), .expired)
        XCTAssertEqual(verify(bytes, now: Int64(ConfigKAT.issuedAt) - 301), .notYetValid)
        XCTAssertEqual(verify(bytes, trusted: false), .clockNotTrusted)
        XCTAssertEqual(verify(bytes, current: 3), .notNewer(version: 3, current: 3))
        XCTAssertEqual(verify(bytes, current: 9), .notNewer(version: 3, current: 9))
        let other = try SignedConfig.issue(by: ConfigKAT.signer, vehicleID: try VehicleID("VIN0002"), version: 1, issuedAt: ConfigKAT.issuedAt,
                                           expiresAt: ConfigKAT.expiresAt, payload: ConfigKAT.payload)
        XCTAssertEqual(verify(other.encoded()), .wrongVehicle)
        let long = try SignedConfig.issue(by: ConfigKAT.signer, vehicleID: ConfigKAT.vehicleID, version: 4, issuedAt: ConfigKAT.issuedAt,
                                          expiresAt: ConfigKAT.issuedAt + SignedConfig.maxLifetimeSeconds + 1, payload: ConfigKAT.payload)
        XCTAssertEqual(verify(long.encoded()), .lifetimeTooLong)
        // A valid signature by another known key does not pass for the named signer.
        let impostor = try P256PrivateKey.generate()
        let forged = try SignedConfig(vehicleID: ConfigKAT.vehicleID, signerKeyID: KeyID(publicKey: ConfigKAT.signer.publicKey), version: 3,
                                      issuedAt: ConfigKAT.issuedAt, expiresAt: ConfigKAT.expiresAt, payload: ConfigKAT.payload,
                                      signature: try impostor.signature(for: try example().signatureInput).rawRepresentation)
        XCTAssertEqual(verify(forged.encoded()), .badSignature)
    }

    func testIssueRefusesInvalidFields() {
        XCTAssertThrowsError(try SignedConfig.issue(by: ConfigKAT.signer, vehicleID: ConfigKAT.vehicleID, version: 0, issuedAt: 10,
                                                    expiresAt: 20, payload: ConfigKAT.payload))
        XCTAssertThrowsError(try SignedConfig.issue(by: ConfigKAT.signer, vehicleID: ConfigKAT.vehicleID, version: 1, issuedAt: 20,
                                                    expiresAt: 20, payload: ConfigKAT.payload))
        XCTAssertThrowsError(try SignedConfig.issue(by: ConfigKAT.signer, vehicleID: ConfigKAT.vehicleID, version: 1, issuedAt: 10, expiresAt: 20,
                                                    payload: Bytes(repeating: 0x20, count: SignedConfig.maxPayloadLength + 1)))
    }
}

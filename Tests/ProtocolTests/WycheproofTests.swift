// Every Wycheproof vector for the primitives the protocol uses must give its expected result.
// "acceptable" vectors may go either way; "valid" must pass and "invalid" must fail.
import FoundationEssentials
import XCTest
@testable import Protocol

private struct Suite<Group: Decodable>: Decodable {
    let algorithm: String
    let numberOfTests: Int
    let testGroups: [Group]
}

private struct ECDSAGroup: Decodable {
    struct Key: Decodable { let uncompressed: String }
    let publicKey: Key
    let publicKeyDer: String
    let publicKeyPem: String
    let sha: String
    let tests: [ECDSATest]
}
private struct ECDSATest: Decodable { let tcId: Int; let msg: String; let sig: String; let result: String }

private struct ECDHGroup: Decodable { let curve: String; let tests: [ECDHTest] }
private struct ECDHTest: Decodable { let tcId: Int; let `public`: String; let `private`: String; let shared: String; let result: String }

private struct GCMGroup: Decodable { let ivSize: Int; let keySize: Int; let tagSize: Int; let tests: [GCMTest] }
private struct GCMTest: Decodable { let tcId: Int; let key: String; let iv: String; let aad: String; let msg: String; let ct: String; let tag: String; let result: String }

final class WycheproofTests: XCTestCase {
    func testECDSAP256SHA256DER() throws {
        let suite = try TestData.load("wycheproof/ecdsa_secp256r1_sha256_test.json", as: Suite<ECDSAGroup>.self)
        var checked = 0
        for group in suite.testGroups {
            XCTAssertEqual(group.sha, "SHA-256")
            let key = try P256PublicKey(sec1: Bytes(testHex: group.publicKey.uncompressed))
            // The same key through the DER and PEM import paths.
            XCTAssertEqual(try P256PublicKey(spkiDER: Bytes(testHex: group.publicKeyDer)), key)
            XCTAssertEqual(try P256PublicKey(pemRepresentation: group.publicKeyPem), key)
            for test in group.tests {
                let message = Bytes(testHex: test.msg)
                let verified: Bool
                if let signature = try? ECDSASignature(derRepresentation: Bytes(testHex: test.sig)) {
                    verified = key.isValidSignature(signature, for: message)
                    if verified {
                        // The raw form of every accepted signature verifies too.
                        let raw = try ECDSASignature(rawRepresentation: signature.rawRepresentation)
                        XCTAssertEqual(raw.derRepresentation, signature.derRepresentation, "tc \(test.tcId)")
                        XCTAssertNoThrow(try key.verify(signature: signature.rawRepresentation, encoding: .raw, message: message))
                    }
                } else {
                    verified = false
                }
                switch test.result {
                case "valid": XCTAssertTrue(verified, "tc \(test.tcId) should verify")
                case "invalid": XCTAssertFalse(verified, "tc \(test.tcId) should not verify")
                default: break
                }
                checked += 1
            }
        }
        XCTAssertEqual(checked, suite.numberOfTests)
    }

    func testECDHP256EcPoint() throws {
        let suite = try TestData.load("wycheproof/ecdh_secp256r1_ecpoint_test.json", as: Suite<ECDHGroup>.self)
        var checked = 0
        for group in suite.testGroups {
            XCTAssertEqual(group.curve, "secp256r1")
            for test in group.tests {
                var scalar = Bytes(testHex: test.private)
                while scalar.count > 32, scalar.first == 0 { scalar.removeFirst() }
                scalar = Bytes(repeating: 0, count: max(0, 32 - scalar.count)) + scalar
                let privateKey = try P256PrivateKey(rawScalar: scalar)
                let shared: Bytes?
                if let peer = try? P256PublicKey(sec1: Bytes(testHex: test.public)) {
                    shared = try? privateKey.sharedSecret(with: peer)
                } else {
                    shared = nil
                }
                switch test.result {
                case "valid": XCTAssertEqual(shared, Bytes(testHex: test.shared), "tc \(test.tcId)")
                case "invalid": XCTAssertNil(shared, "tc \(test.tcId) must be refused")
                default:
                    if let shared { XCTAssertEqual(shared, Bytes(testHex: test.shared), "tc \(test.tcId)") }
                }
                checked += 1
            }
        }
        XCTAssertEqual(checked, suite.numberOfTests)
    }

    func testAESGCM96BitNonce128BitTag() throws {
        let suite = try TestData.load("wycheproof/aes_gcm_test.json", as: Suite<GCMGroup>.self)
        var checked = 0
        for group in suite.testGroups where group.ivSize == 96 && group.tagSize == 128 {
            for test in group.tests {
                let key = Bytes(testHex: test.key), nonce = Bytes(testHex: test.iv), aad = Bytes(testHex: test.aad)
                let message = Bytes(testHex: test.msg), ct = Bytes(testHex: test.ct), tag = Bytes(testHex: test.tag)
                let opened = try? AESGCM.open(ciphertext: ct, tag: tag, key: key, nonce: nonce, authenticating: aad)
                switch test.result {
                case "valid":
                    XCTAssertEqual(opened, message, "tc \(test.tcId) open")
                    let sealed = try AESGCM.seal(message, key: key, nonce: nonce, authenticating: aad)
                    XCTAssertEqual(sealed.ciphertext, ct, "tc \(test.tcId) seal")
                    XCTAssertEqual(sealed.tag, tag, "tc \(test.tcId) tag")
                case "invalid":
                    XCTAssertNil(opened, "tc \(test.tcId) must not open")
                default: break
                }
                checked += 1
            }
        }
        XCTAssertGreaterThan(checked, 100, "the 96-bit-nonce groups must be present")
    }
}

// The keys examples of docs/protocol.md (section 18.9), reproduced byte for byte: a share
// certificate, a revocation and the stored records. (The pairing exchange: PairingKnownAnswerTests.)
// The three signatures are given (ECDSA is randomized): they are verified, then used.
//
// To regenerate after an intentional format change:
//   OCK_PRINT_KEYS_KAT=1 swift test --scratch-path .build-keys --filter KeysKnownAnswerTests/testPrintFreshExample
import XCTest
#if canImport(Glibc)
import Glibc
#endif
@testable import Protocol

enum KeysKAT {
    static let owner = KAT.phoneLongTerm
    static let holder = Fixtures.key("OCK1 KAT guest key")
    static let carIdentity = KAT.carIdentity
    static let vehicleID = KAT.vehicleID
    static let serial = try! ShareSerial(bytes: Bytes(testHex: "a1b2c3d4e5f60718"))
    static let notBefore: UInt32 = 1_767_225_600   // 2026-01-01T00:00:00Z
    static let notAfter: UInt32 = 1_767_830_400    // 2026-01-08T00:00:00Z
    static let issuedAt: UInt32 = 1_767_312_000    // 2026-01-02T00:00:00Z

    static let shareSignature = Bytes(testHex: "66956b1a0252bb60ecb45a1376f13dd13f8c16e4c7e0befffe6027a3249ec16b7712808c758038bbfafcf8b62b32550fe57ef981bb0ef93a321114909b45c81b")
    static let revocationSignature = Bytes(testHex: "1fb8caa82678472586e1bfe0e038191a105edb0f6164568b679359f52d4e27dfc33879a95d70a672f733dbe41890f871b42920be688ae9f83ad6d9562e4a6490")

    static func values(share: Bytes = shareSignature, revocation: Bytes = revocationSignature) throws -> [(String, Bytes)] {
        var out: [(String, Bytes)] = []
        out.append(("share holder public key", holder.publicKey.sec1))
        out.append(("share holder key ID", KeyID(publicKey: holder.publicKey).bytes))
        let body = ShareCertificate.body(serial: serial, holder: holder.publicKey, issuerKeyID: KeyID(publicKey: owner.publicKey),
                                         vehicleID: vehicleID, permissions: PermissionLevel.unlockOnly.permissions,
                                         notBefore: notBefore, notAfter: notAfter)
        out.append(("share certificate body", body))
        out.append(("share signature input", ShareCertificate.signatureLabel + body))
        out.append(("share signature", share))
        out.append(("share certificate", body + share))

        let revocationBody = Revocation.body(vehicleID: vehicleID, issuerKeyID: KeyID(publicKey: owner.publicKey),
                                             issuedAt: issuedAt, target: .serial(serial))
        out.append(("revocation body", revocationBody))
        out.append(("revocation signature input", Revocation.signatureLabel + revocationBody))
        out.append(("revocation signature", revocation))
        out.append(("revocation", revocationBody + revocation))

        let record = KeyRecord(publicKey: holder.publicKey, role: .shared, permissions: .unlock, notBefore: notBefore,
                               notAfter: notAfter, share: ShareProvenance(serial: serial, issuer: KeyID(publicKey: owner.publicKey)))
        out.append(("stored key record", record.storedBytes()))
        let activity = KeyActivity(keyID: record.keyID, enrolledAt: notBefore + 60, enrolledAtTrusted: true,
                                   lastUsedAt: issuedAt, lastUseTrusted: false, useCount: 3)
        out.append(("stored key activity", activity.storedBytes()))
        let entry = RevocationEntry(revocation: try Revocation.decode(revocationBody + revocation), signedBytes: revocationBody + revocation,
                                    appliedAt: issuedAt + 5, appliedAtTrusted: true)
        out.append(("stored revocation", entry.storedBytes()))

        return out
    }

    /// The documented values (docs/protocol.md section 18.9).
    static let expected: [(String, String)] = [
        ("share holder public key",
            "04fdd12bdc35ebe064b056583ad6200e9841f4010bb9041fa5eda98e52801583b3a3b73d3e419a916564cf17189daf69"
            + "b9807bc242164f68632bb996e11cf99236"),
        ("share holder key ID", "51b765f8fd838a91"),
        ("share certificate body",
            "3001a1b2c3d4e5f6071804fdd12bdc35ebe064b056583ad6200e9841f4010bb9041fa5eda98e52801583b3a3b73d3e41"
            + "9a916564cf17189daf69b9807bc242164f68632bb996e11cf9923680cfa36924866af5114f434b2d4b41542d56454849"
            + "434c452d31016955b900695ef380"),
        ("share signature input",
            "4f434b312d53484152453001a1b2c3d4e5f6071804fdd12bdc35ebe064b056583ad6200e9841f4010bb9041fa5eda98e"
            + "52801583b3a3b73d3e419a916564cf17189daf69b9807bc242164f68632bb996e11cf9923680cfa36924866af5114f43"
            + "4b2d4b41542d56454849434c452d31016955b900695ef380"),
        ("share signature",
            "66956b1a0252bb60ecb45a1376f13dd13f8c16e4c7e0befffe6027a3249ec16b7712808c758038bbfafcf8b62b32550f"
            + "e57ef981bb0ef93a321114909b45c81b"),
        ("share certificate",
            "3001a1b2c3d4e5f6071804fdd12bdc35ebe064b056583ad6200e9841f4010bb9041fa5eda98e52801583b3a3b73d3e41"
            + "9a916564cf17189daf69b9807bc242164f68632bb996e11cf9923680cfa36924866af5114f434b2d4b41542d56454849"
            + "434c452d31016955b900695ef38066956b1a0252bb60ecb45a1376f13dd13f8c16e4c7e0befffe6027a3249ec16b7712"
            + "808c758038bbfafcf8b62b32550fe57ef981bb0ef93a321114909b45c81b"),
        ("revocation body", "3101114f434b2d4b41542d56454849434c452d3180cfa36924866af569570a8001a1b2c3d4e5f60718"),
        ("revocation signature input",
            "4f434b312d5245564f434154494f4e3101114f434b2d4b41542d56454849434c452d3180cfa36924866af569570a8001"
            + "a1b2c3d4e5f60718"),
        ("revocation signature",
            "1fb8caa82678472586e1bfe0e038191a105edb0f6164568b679359f52d4e27dfc33879a95d70a672f733dbe41890f871"
            + "b42920be688ae9f83ad6d9562e4a6490"),
        ("revocation",
            "3101114f434b2d4b41542d56454849434c452d3180cfa36924866af569570a8001a1b2c3d4e5f607181fb8caa8267847"
            + "2586e1bfe0e038191a105edb0f6164568b679359f52d4e27dfc33879a95d70a672f733dbe41890f871b42920be688ae9"
            + "f83ad6d9562e4a6490"),
        ("stored key record",
            "4b0104fdd12bdc35ebe064b056583ad6200e9841f4010bb9041fa5eda98e52801583b3a3b73d3e419a916564cf17189d"
            + "af69b9807bc242164f68632bb996e11cf9923602016955b900695ef38002a1b2c3d4e5f6071880cfa36924866af5"),
        ("stored key activity", "410151b765f8fd838a916955b93c69570a800100000003"),
        ("stored revocation",
            "520169570a850100693101114f434b2d4b41542d56454849434c452d3180cfa36924866af569570a8001a1b2c3d4e5f6"
            + "07181fb8caa82678472586e1bfe0e038191a105edb0f6164568b679359f52d4e27dfc33879a95d70a672f733dbe41890"
            + "f871b42920be688ae9f83ad6d9562e4a6490"),
    ]
}

final class KeysKnownAnswerTests: XCTestCase {
    func expected(_ name: String) throws -> Bytes {
        Bytes(testHex: try XCTUnwrap(KeysKAT.expected.first { $0.0 == name }?.1, name))
    }

    func testGivenSignaturesVerify() throws {
        let checks: [(P256PrivateKey, String, Bytes)] = [
            (KeysKAT.owner, "share signature input", KeysKAT.shareSignature),
            (KeysKAT.owner, "revocation signature input", KeysKAT.revocationSignature),
        ]
        for (key, input, signature) in checks {
            XCTAssertTrue(key.publicKey.isValidSignature(try ECDSASignature(rawRepresentation: signature), for: try expected(input)), input)
        }
    }

    func testEveryValueFromTheFormulas() throws {
        let computed = try KeysKAT.values()
        XCTAssertEqual(computed.map(\.0), KeysKAT.expected.map(\.0))
        for ((name, bytes), (_, hex)) in zip(computed, KeysKAT.expected) {
            XCTAssertEqual(bytes.hexString, hex, name)
        }
    }

    func testTheCodecsAndValidatorsAcceptTheExample() throws {
        let certificate = try ShareCertificate.decode(try expected("share certificate"))
        XCTAssertEqual(certificate.encoded(), try expected("share certificate"))
        XCTAssertEqual(certificate.holderKeyID.bytes, try expected("share holder key ID"))
        let keychain = Keychain(records: [KeyRecord(publicKey: KeysKAT.owner.publicKey, role: .owner, permissions: .all)])
        let now = ProtocolTime(monotonicMillis: 1, wallSeconds: Int64(KeysKAT.issuedAt), wallClockTrusted: true)
        let record = try ShareCertificateValidator.verify(try expected("share certificate"), keyID: certificate.holderKeyID,
                                                          vehicleID: KeysKAT.vehicleID, now: now, keychain: keychain)
        XCTAssertEqual(record.storedBytes(), try expected("stored key record"))
        let revocation = try RevocationValidator.verify(try expected("revocation"), vehicleID: KeysKAT.vehicleID, keys: keychain)
        XCTAssertEqual(revocation.target, .serial(KeysKAT.serial))
        XCTAssertEqual(try RevocationEntry(storedBytes: try expected("stored revocation")).revocation, revocation.revocation)
        XCTAssertEqual(try KeyActivity(storedBytes: try expected("stored key activity")).useCount, 3)
    }

    /// docs/protocol.md shows the same bytes (hex split over 64-character lines).
    func testDocumentShowsTheSameValues() throws {
        let doc = try XCTUnwrap(readRepositoryFile("docs/protocol.md"), "docs/protocol.md missing")
        let blocks = DocumentHexBlocks.blocks(in: doc)
        for (name, hex) in KeysKAT.expected {
            XCTAssertTrue(blocks.contains(hex), "docs/protocol.md lacks \(name)")
        }
    }

    func testPrintFreshExample() throws {
        guard getenv("OCK_PRINT_KEYS_KAT") != nil else { return }
        let draft = Dictionary(uniqueKeysWithValues: try KeysKAT.values())
        func sign(_ key: P256PrivateKey, _ name: String) throws -> Bytes {
            try key.signature(for: XCTUnwrap(draft[name])).rawRepresentation
        }
        let values = try KeysKAT.values(share: sign(KeysKAT.owner, "share signature input"),
                                        revocation: sign(KeysKAT.owner, "revocation signature input"))
        for (name, bytes) in values { print("KEYSKAT|\(name)|\(bytes.count)|\(bytes.hexString)") }
    }
}

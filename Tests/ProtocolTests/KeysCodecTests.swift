// Strict decoding of every keys format: round trips, and the malformed inputs each refuses.
import XCTest
@testable import Protocol

final class KeysCodecTests: XCTestCase {
    func pairingExpected(_ name: String) -> Bytes {
        Bytes(testHex: PairingKAT.expected.first { $0.0 == name }?.1 ?? "")
    }

    func expected(_ name: String) -> Bytes {
        Bytes(testHex: KeysKAT.expected.first { $0.0 == name }!.1)
    }

    /// Every prefix is refused, and so is one extra byte.
    func assertStrict<T>(_ bytes: Bytes, _ decode: (Bytes) throws -> T, file: StaticString = #filePath, line: UInt = #line) {
        for length in 0..<bytes.count {
            XCTAssertThrowsError(try decode(Array(bytes.prefix(length))), "prefix \(length)", file: file, line: line)
        }
        XCTAssertThrowsError(try decode(bytes + [0]), "trailing byte", file: file, line: line)
        XCTAssertNoThrow(try decode(bytes), file: file, line: line)
    }

    func testRoundTripsAndStrictness() throws {
        let certificate = expected("share certificate")
        XCTAssertEqual(try ShareCertificate.decode(certificate).encoded(), certificate)
        assertStrict(certificate) { try ShareCertificate.decode($0) }
        let revocation = expected("revocation")
        XCTAssertEqual(try Revocation.decode(revocation).encoded(), revocation)
        assertStrict(revocation) { try Revocation.decode($0) }
        let record = expected("stored key record")
        XCTAssertEqual(try KeyRecord(storedBytes: record).storedBytes(), record)
        assertStrict(record) { try KeyRecord(storedBytes: $0) }
        let activity = expected("stored key activity")
        XCTAssertEqual(try KeyActivity(storedBytes: activity).storedBytes(), activity)
        assertStrict(activity) { try KeyActivity(storedBytes: $0) }
        let entry = expected("stored revocation")
        XCTAssertEqual(try RevocationEntry(storedBytes: entry).storedBytes(), entry)
        assertStrict(entry) { try RevocationEntry(storedBytes: $0) }
        for name in ["PairingHello", "PairingChallenge", "PairingProof", "PairingResult"] {
            let message = pairingExpected(name)
            XCTAssertEqual(try Message.decode(message).encoded(), message, name)
            assertStrict(message) { try Message.decode($0) }
        }
        let owner = KeyRecord(publicKey: KeysFixtures.owner.publicKey, role: .owner, permissions: .all, revoked: true)
        XCTAssertEqual(try KeyRecord(storedBytes: owner.storedBytes()), owner)
        XCTAssertEqual(owner.storedBytes().count, KeyRecord.storedLength)
    }

    func testFieldChecks() throws {
        var certificate = expected("share certificate")
        certificate[0] = 0x31
        XCTAssertThrowsError(try ShareCertificate.decode(certificate))
        certificate = expected("share certificate")
        certificate[1] = 0x02
        XCTAssertThrowsError(try ShareCertificate.decode(certificate)) { XCTAssertEqual($0 as? MessageFormatError, .unsupportedVersion(2)) }
        certificate = expected("share certificate")
        certificate[74] ^= 1  // holder key off the curve
        XCTAssertThrowsError(try ShareCertificate.decode(certificate))
        certificate = expected("share certificate")
        certificate[83] = 0   // vehicle ID length 0
        XCTAssertThrowsError(try ShareCertificate.decode(certificate))
        certificate = expected("share certificate")
        certificate[84] = 0x07  // non-printable vehicle ID
        XCTAssertThrowsError(try ShareCertificate.decode(certificate))
        XCTAssertThrowsError(try ShareCertificate.decode(Bytes(repeating: 0x30, count: ShareCertificate.maxLength + 1))) {
            XCTAssertEqual($0 as? MessageFormatError, .oversized(length: ShareCertificate.maxLength + 1, limit: ShareCertificate.maxLength))
        }

        var revocation = expected("revocation")
        revocation[3 + KeysKAT.vehicleID.bytes.count + 12] = 0x03  // target kind
        XCTAssertThrowsError(try Revocation.decode(revocation))

        var record = expected("stored key record")
        record[77] |= 0x04  // undefined flag
        XCTAssertThrowsError(try KeyRecord(storedBytes: record))
        record = expected("stored key record")
        record[67] = 3  // unknown role
        XCTAssertThrowsError(try KeyRecord(storedBytes: record))
        record = expected("stored key record")
        record[67] = 1  // owner with provenance
        XCTAssertThrowsError(try KeyRecord(storedBytes: record))
        record = expected("stored key record")
        record[77] = 0  // no provenance flag but a serial
        XCTAssertThrowsError(try KeyRecord(storedBytes: record))
        record = expected("stored key record")
        record[0] = StoredRecordFormat.activityTag
        XCTAssertThrowsError(try KeyRecord(storedBytes: record), "a record of another kind")

        var entry = expected("stored revocation")
        entry[8] = 200  // length beyond the bytes
        XCTAssertThrowsError(try RevocationEntry(storedBytes: entry))

        let result = pairingExpected("PairingResult")
        var failedWithMAC = result
        failedWithMAC[3] = 31
        XCTAssertThrowsError(try PairingResultMessage.decode(failedWithMAC), "a failure must not carry a MAC")
        XCTAssertEqual(PairingResultMessage(.wrongPairingCode).encoded(), Bytes(testHex: "2302001f") + Bytes(repeating: 0, count: 32))
        var hello = pairingExpected("PairingHello")
        hello[2] = 0x02
        XCTAssertThrowsError(try PairingHelloMessage.decode(hello), "compressed point")
    }

    func testIssuingRefusesWhatTheCarWouldRefuse() throws {
        let issue = { (permissions: Permissions, notBefore: UInt32, notAfter: UInt32) in
            try ShareCertificate.issue(by: KeysFixtures.owner, holder: KeysFixtures.guest.publicKey, vehicleID: Fixtures.vehicleID,
                                       permissions: permissions, notBefore: notBefore, notAfter: notAfter, serial: KeysFixtures.serial)
        }
        XCTAssertThrowsError(try issue(.manage, 0, 10))
        XCTAssertThrowsError(try issue([], 0, 10))
        XCTAssertThrowsError(try issue(Permissions(rawValue: 0x40), 0, 10))
        XCTAssertThrowsError(try issue(.unlock, 10, 10))
        XCTAssertNoThrow(try issue(.shareable, 0, 10))
        struct BrokenSigner: ProtocolSigner {
            var publicKey: P256PublicKey { KeysFixtures.owner.publicKey }
            func signature(for message: Bytes) throws -> ECDSASignature { throw CryptoError.signatureInvalid }
        }
        XCTAssertThrowsError(try Revocation.issue(by: BrokenSigner(), vehicleID: Fixtures.vehicleID, target: .key(KeyID(publicKey: KeysFixtures.guest.publicKey)),
                                                  issuedAt: 1)) { XCTAssertEqual($0 as? KeyObjectError, .signingFailed) }
    }

    func testDescriptionsHoldNoSecrets() throws {
        let code = try PairingCode("424242")
        XCTAssertFalse(code.description.contains("424242"))
        XCTAssertFalse("\(code)".contains("424242"))
        let decoded = MessageDecoder.describe(pairingExpected("PairingResult"))
        XCTAssertTrue(decoded.contains("PairingResult"), decoded)
        XCTAssertTrue(MessageDecoder.describe(pairingExpected("PairingChallenge")).contains("OCK-KAT-VEHICLE-1"))
    }
}

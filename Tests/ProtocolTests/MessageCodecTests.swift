// Byte vectors for every message and the negative cases every decoder must refuse.
import XCTest
@testable import Protocol

final class MessageCodecTests: XCTestCase {
    let keyID = try! KeyID(bytes: Bytes(testHex: "0102030405060708"))
    let ephemeral = Bytes(testHex: "04" + String(repeating: "11", count: 32) + String(repeating: "22", count: 32))
    let challenge = Bytes(0..<32)

    // MARK: Hello

    func testHelloVectorWithoutCertificate() throws {
        let hello = try HelloMessage(keyID: keyID, ephemeralPublicKey: ephemeral)
        let expected = "0101" + "0102030405060708" + "04" + String(repeating: "11", count: 32)
            + String(repeating: "22", count: 32) + "0000"
        XCTAssertEqual(hello.encoded().hexString, expected)
        XCTAssertEqual(hello.encoded().count, 77)
        XCTAssertEqual(try HelloMessage.decode(Bytes(testHex: expected)), hello)
    }

    func testHelloVectorWithCertificate() throws {
        let hello = try HelloMessage(keyID: keyID, ephemeralPublicKey: ephemeral, shareCertificate: [0xC0, 0xFF, 0xEE])
        let bytes = hello.encoded()
        XCTAssertEqual(Array(bytes[75...]).hexString, "0003c0ffee")
        XCTAssertEqual(try HelloMessage.decode(bytes).shareCertificate, [0xC0, 0xFF, 0xEE])
    }

    func testHelloRejectsLyingCertificateLengthAndTrailingBytes() throws {
        var bytes = try HelloMessage(keyID: keyID, ephemeralPublicKey: ephemeral).encoded()
        bytes[76] = 0x05 // claims 5 certificate bytes, none follow
        XCTAssertThrowsError(try HelloMessage.decode(bytes)) {
            XCTAssertEqual($0 as? MessageFormatError, .truncated(field: "shareCertificate", needed: 5, available: 0))
        }
        bytes[76] = 0x00
        XCTAssertThrowsError(try HelloMessage.decode(bytes + [0])) { XCTAssertEqual($0 as? MessageFormatError, .trailingBytes(count: 1)) }
    }

    func testHelloRejectsCompressedOrWrongPrefixKey() throws {
        var bytes = try HelloMessage(keyID: keyID, ephemeralPublicKey: ephemeral).encoded()
        bytes[10] = 0x02
        XCTAssertThrowsError(try HelloMessage.decode(bytes)) {
            guard case .invalidField(field: "phoneEphemeralPub", _)? = $0 as? MessageFormatError else { return XCTFail("\($0)") }
        }
    }

    func testHelloCertificateBoundedByMessageLimit() throws {
        let largest = Bytes(repeating: 0xAB, count: HelloMessage.maxCertificateLength)
        let hello = try HelloMessage(keyID: keyID, ephemeralPublicKey: ephemeral, shareCertificate: largest)
        XCTAssertEqual(hello.encoded().count, Wire.maxMessageLength)
        XCTAssertNoThrow(try HelloMessage.decode(hello.encoded()))
        XCTAssertThrowsError(try HelloMessage(keyID: keyID, ephemeralPublicKey: ephemeral, shareCertificate: largest + [0]))
    }

    // MARK: Challenge

    func testChallengeVector() throws {
        let vid = try VehicleID("VIN1")
        let signature = Bytes(repeating: 0x5A, count: 64)
        let message = try ChallengeMessage(challenge: challenge, carEphemeralPublicKey: ephemeral, vehicleID: vid, signature: signature)
        let expected = "0201" + challenge.hexString + ephemeral.hexString + "04" + "56494e31" + String(repeating: "5a", count: 64)
        XCTAssertEqual(message.encoded().hexString, expected)
        XCTAssertEqual(message.body.count, 2 + 32 + 65 + 1 + 4)
        XCTAssertEqual(try ChallengeMessage.decode(Bytes(testHex: expected)), message)
        XCTAssertEqual(ChallengeMessage.signatureInput(hello: [1, 2], body: [3]),
                       Array("OCK1-CHALLENGE".utf8) + [1, 2, 3])
    }

    func testChallengeRejectsBadVehicleIDs() throws {
        let base = try ChallengeMessage(challenge: challenge, carEphemeralPublicKey: ephemeral,
                                        vehicleID: VehicleID("VIN1"), signature: Bytes(repeating: 1, count: 64)).encoded()
        var zeroLength = base
        zeroLength[99] = 0
        XCTAssertThrowsError(try ChallengeMessage.decode(zeroLength))
        var control = base
        control[100] = 0x07
        XCTAssertThrowsError(try ChallengeMessage.decode(control)) {
            XCTAssertEqual($0 as? MessageFormatError, .invalidField(field: "vehicleID", reason: "must be printable ASCII"))
        }
        XCTAssertThrowsError(try VehicleID(String(repeating: "A", count: 33)))
        XCTAssertThrowsError(try VehicleID("caf\u{e9}"))
    }

    // MARK: AuthResponse (the seed app's frame)

    func testAuthResponseSeedFrameWithDERSignature() throws {
        let der = Bytes(testHex: "3006020101020102")
        let frame = Bytes(testHex: "aabb01" + challenge.hexString + "c2b1a065" + der.hexString)
        let message = try AuthResponseMessage.decode(frame)
        XCTAssertEqual(message.challenge, challenge)
        XCTAssertEqual(message.timestamp, 0x65A0_B1C2, "timestamp is little-endian")
        XCTAssertEqual(message.signature, der)
        XCTAssertEqual(message.signatureEncoding, .der)
        XCTAssertEqual(message.encoded(), frame)
        XCTAssertEqual(message.signedData.hexString, challenge.hexString + "c2b1a065")
    }

    func testAuthResponseRawSignatureByLength() throws {
        let raw = Bytes(repeating: 0x33, count: 64)
        let message = try AuthResponseMessage(challenge: challenge, timestamp: 1, signature: raw)
        XCTAssertEqual(message.encoded().count, 39 + 64)
        XCTAssertEqual(Array(message.encoded()[35..<39]), [1, 0, 0, 0])
        XCTAssertEqual(try AuthResponseMessage.decode(message.encoded()).signatureEncoding, .raw)
    }

    func testAuthResponseRejectsSignatureLengthsOutsideDERAndRaw() {
        let prefix = Bytes(testHex: "aabb01") + challenge + [0, 0, 0, 0]
        for length in [0, 1, 7, 73, 100] {
            XCTAssertThrowsError(try AuthResponseMessage.decode(prefix + Bytes(repeating: 0x30, count: length)), "length \(length)")
        }
    }

    func testAuthResponseRejectsWrongSecondHeaderByteAndVersion() {
        let tail = challenge + [0, 0, 0, 0] + Bytes(repeating: 1, count: 64)
        XCTAssertThrowsError(try AuthResponseMessage.decode([0xAA, 0xBC, 0x01] + tail))
        XCTAssertThrowsError(try AuthResponseMessage.decode([0xAA, 0xBB, 0x02] + tail)) {
            XCTAssertEqual($0 as? MessageFormatError, .unsupportedVersion(2))
            XCTAssertEqual(($0 as? MessageFormatError)?.fault, .unsupportedVersion)
        }
    }

    // MARK: Fault

    func testFaultVector() throws {
        XCTAssertEqual(FaultMessage(.malformedMessage).encoded().hexString, "7f010012")
        XCTAssertEqual(try FaultMessage.decode(Bytes(testHex: "7f010011")).fault, .rateLimited)
        XCTAssertEqual(try FaultMessage.decode(Bytes(testHex: "7f01ffff")).fault, nil, "unknown codes are kept raw")
        XCTAssertEqual(try FaultMessage.decode(Bytes(testHex: "7f01ffff")).code, 0xFFFF)
        XCTAssertThrowsError(try FaultMessage.decode(Bytes(testHex: "7f010000")), "0 is not a fault")
    }

    // MARK: Encrypted records and their plaintexts

    func testEncryptedRecordVector() throws {
        let record = try EncryptedRecord(type: .command, counter: 0x0102030405060708, ciphertext: [0xAA, 0xBB],
                                         tag: Bytes(repeating: 0xEE, count: 16))
        let expected = "1001" + "0102030405060708" + "aabb" + String(repeating: "ee", count: 16)
        XCTAssertEqual(record.encoded().hexString, expected)
        XCTAssertEqual(record.header.hexString, "10010102030405060708")
        XCTAssertEqual(try EncryptedRecord.decode(Bytes(testHex: expected)), record)
        // Header and tag only (empty ciphertext) is the shortest record.
        XCTAssertNoThrow(try EncryptedRecord.decode(Bytes(testHex: "1101" + "0000000000000001" + String(repeating: "00", count: 16))))
        XCTAssertThrowsError(try EncryptedRecord.decode(Bytes(testHex: "1101" + "0000000000000001" + String(repeating: "00", count: 15))))
    }

    func testNonceLayout() {
        XCTAssertEqual(RecordNonce.make(direction: .phoneToCar, counter: 1).hexString, "010000000000000000000001")
        XCTAssertEqual(RecordNonce.make(direction: .carToPhone, counter: 0x0102030405060708).hexString, "020000000102030405060708")
    }

    func testSessionAcceptedVector() throws {
        let body = SessionAcceptedBody(role: .shared, permissions: [.unlock, .lock], notBefore: 0, notAfter: 0xFFFF_FFFF,
                                       carTime: 0x6955_B900, clockTrusted: true, sessionLifetime: 300)
        let expected = "02" + "03" + "00000000" + "ffffffff" + "6955b900" + "01" + "012c"
        XCTAssertEqual(body.encoded().hexString, expected)
        XCTAssertEqual(try SessionAcceptedBody.decode(Bytes(testHex: expected)), body)
        XCTAssertThrowsError(try SessionAcceptedBody.decode(Bytes(testHex: "03" + expected.dropFirst(2))), "unknown role")
        XCTAssertThrowsError(try SessionAcceptedBody.decode(Bytes(testHex: String(expected.dropLast(6)) + "02012c")), "clockTrusted 2")
        XCTAssertThrowsError(try SessionAcceptedBody.decode(Bytes(testHex: expected + "00")))
    }

    func testCommandVector() throws {
        let body = try CommandBody(command: .unlock, expiresAt: 0x6955_B90A)
        XCTAssertEqual(body.encoded().hexString, "01" + "6955b90a" + "00")
        let withArgs = try CommandBody(command: .status, expiresAt: 1, args: [9, 8])
        XCTAssertEqual(withArgs.encoded().hexString, "04" + "00000001" + "02" + "0908")
        XCTAssertEqual(try CommandBody.decode(withArgs.encoded()), withArgs)
        XCTAssertThrowsError(try CommandBody.decode(Bytes(testHex: "0900000001" + "00")), "unknown command")
        XCTAssertThrowsError(try CommandBody.decode(Bytes(testHex: "0400000001" + "03" + "0908")), "argLen lies")
    }

    func testResponseVector() throws {
        let body = ResponseBody(command: .lock, fault: nil, vehicleState: [.locked, .trunkLocked], carTime: 0x6955_B90A)
        XCTAssertEqual(body.encoded().hexString, "02" + "0000" + "0011" + "6955b90a")
        XCTAssertEqual(try ResponseBody.decode(body.encoded()), body)
        let fault = ResponseBody(command: nil, fault: .sessionExpired, vehicleState: [], carTime: 1)
        XCTAssertEqual(fault.encoded().hexString, "00" + "0018" + "0000" + "00000001")
        XCTAssertEqual(try ResponseBody.decode(fault.encoded()).fault, .sessionExpired)
    }

    // MARK: Negatives common to every message

    func validMessages() throws -> [Bytes] {
        [try HelloMessage(keyID: keyID, ephemeralPublicKey: ephemeral, shareCertificate: [1, 2, 3]).encoded(),
         try ChallengeMessage(challenge: challenge, carEphemeralPublicKey: ephemeral, vehicleID: VehicleID("V"),
                              signature: Bytes(repeating: 7, count: 64)).encoded(),
         FaultMessage(.busy).encoded(),
         try EncryptedRecord(type: .response, counter: 3, ciphertext: [1, 2, 3], tag: Bytes(repeating: 0, count: 16)).encoded(),
         try AdvertisingKeyGrantMessage(ciphertext: Bytes(repeating: 5, count: 16), tag: Bytes(repeating: 6, count: 16)).encoded()]
    }

    func testEveryTruncationIsRejected() throws {
        for message in try validMessages() {
            // A record has no length field: a cut record above the minimum is syntactically a
            // shorter ciphertext, and GCM authentication refuses it (SessionTests).
            let end = message.first == MessageType.response.rawValue ? EncryptedRecord.minLength : message.count
            for length in 0..<end {
                XCTAssertThrowsError(try Message.decode(Array(message.prefix(length))), "\(message.hexString) cut at \(length)")
            }
        }
        // AuthResponse: every cut before the shortest possible (8-byte DER) signature fails.
        let auth = try AuthResponseMessage(challenge: challenge, timestamp: 5, signature: Bytes(repeating: 1, count: 64)).encoded()
        for length in 0..<(39 + 8) { XCTAssertThrowsError(try Message.decode(Array(auth.prefix(length)))) }
    }

    func testOversizedEmptyAndUnknownTypeAreRejected() throws {
        XCTAssertThrowsError(try Message.decode([])) { XCTAssertEqual($0 as? MessageFormatError, .empty) }
        var huge = try HelloMessage(keyID: keyID, ephemeralPublicKey: ephemeral).encoded()
        huge += Bytes(repeating: 0, count: Wire.maxMessageLength + 1 - huge.count)
        XCTAssertThrowsError(try Message.decode(huge)) {
            XCTAssertEqual($0 as? MessageFormatError, .oversized(length: 1025, limit: 1024))
            XCTAssertEqual(($0 as? MessageFormatError)?.fault, .malformedMessage)
        }
        for type: UInt8 in [0x00, 0x04, 0x12, 0x7E, 0xAB, 0xFF] {
            XCTAssertThrowsError(try Message.decode([type, 0x01, 0, 0])) {
                XCTAssertEqual($0 as? MessageFormatError, .unknownMessageType(type))
            }
        }
    }

    func testUnknownVersionIsRejectedForEveryType() throws {
        for var message in try validMessages() {
            message[1] = 0x02
            XCTAssertThrowsError(try Message.decode(message)) {
                XCTAssertEqual($0 as? MessageFormatError, .unsupportedVersion(2))
            }
        }
    }

    func testTrailingBytesRejected() throws {
        for message in try validMessages() where message.first != MessageType.response.rawValue {
            XCTAssertThrowsError(try Message.decode(message + [0x00]), message.hexString)
        }
    }
}

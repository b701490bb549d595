// Known answers and negative cases for the crypto core beyond Wycheproof.
import XCTest
@testable import Protocol

final class CryptoTests: XCTestCase {
    // RFC 5869, test case 1.
    func testHKDFRFC5869Case1() throws {
        let okm = try HKDF.deriveKey(
            inputKeyMaterial: Bytes(repeating: 0x0b, count: 22),
            salt: Bytes(testHex: "000102030405060708090a0b0c"),
            info: Bytes(testHex: "f0f1f2f3f4f5f6f7f8f9"),
            outputByteCount: 42)
        XCTAssertEqual(okm.hexString, "3cb25f25faacd57a90434f64d0362f2a2d2d0a90cf1a5a4c5db02d56ecc4c5bf34007208d5b887185865")
    }

    // RFC 5869, test case 3: empty salt and info.
    func testHKDFRFC5869Case3EmptySaltAndInfo() throws {
        let okm = try HKDF.deriveKey(inputKeyMaterial: Bytes(repeating: 0x0b, count: 22), salt: [], info: [], outputByteCount: 42)
        XCTAssertEqual(okm.hexString, "8da4e775a563c18f715f802a063c5a31b8a11f5c5ee1879ec3454e5f3c738d2d9d201395faa4b61a96c8")
    }

    func testHKDFRejectsOutputLengths() {
        XCTAssertThrowsError(try HKDF.deriveKey(inputKeyMaterial: [1], salt: [], info: [], outputByteCount: 0))
        XCTAssertThrowsError(try HKDF.deriveKey(inputKeyMaterial: [1], salt: [], info: [], outputByteCount: 255 * 32 + 1))
    }

    func testSHA256AndHMACKnownAnswers() {
        XCTAssertEqual(SHA256.hash(Bytes("abc".utf8)).hexString, "ba7816bf8f01cfea414140de5dae2223b00361a396177a9cb410ff61f20015ad")
        // RFC 4231, test case 2.
        let mac = HMACSHA256.authenticationCode(key: Bytes("Jefe".utf8), message: Bytes("what do ya want for nothing?".utf8))
        XCTAssertEqual(mac.hexString, "5bdcc146bf60754e6a042426089575c75a003f089d2739839dec58b964ec3843")
        XCTAssertTrue(HMACSHA256.isValid(mac, key: Bytes("Jefe".utf8), message: Bytes("what do ya want for nothing?".utf8)))
        var flipped = mac
        flipped[31] ^= 1
        XCTAssertFalse(HMACSHA256.isValid(flipped, key: Bytes("Jefe".utf8), message: Bytes("what do ya want for nothing?".utf8)))
        XCTAssertFalse(HMACSHA256.isValid(Array(mac.prefix(16)), key: Bytes("Jefe".utf8), message: Bytes("what do ya want for nothing?".utf8)))
    }

    func testConstantTimeEquals() {
        XCTAssertTrue(ConstantTime.equals([], []))
        XCTAssertTrue(ConstantTime.equals([1, 2, 3], [1, 2, 3]))
        XCTAssertFalse(ConstantTime.equals([1, 2, 3], [1, 2, 4]))
        XCTAssertFalse(ConstantTime.equals([1, 2, 3], [1, 2]))
    }

    // Wycheproof tc 1's DER signature and its raw r || s form, byte for byte.
    func testRawSignatureEncodingKnownAnswer() throws {
        let der = Bytes(testHex: "3045022100b292a619339f6e567a305c951c0dcbcc42d16e47f219f9e98e76e09d8770b34a02200177e60492c5a8242f76f07bfe3661bde59ec2a17ce5bd2dab2abebdf89a62e2")
        let raw = Bytes(testHex: "b292a619339f6e567a305c951c0dcbcc42d16e47f219f9e98e76e09d8770b34a0177e60492c5a8242f76f07bfe3661bde59ec2a17ce5bd2dab2abebdf89a62e2")
        XCTAssertEqual(try ECDSASignature(derRepresentation: der).rawRepresentation, raw)
        XCTAssertEqual(try ECDSASignature(rawRepresentation: raw).derRepresentation, der)
        // Small r and s: DER drops leading zeros, raw keeps 32-byte halves.
        let smallRaw = Bytes(repeating: 0, count: 31) + [5] + Bytes(repeating: 0, count: 31) + [0x80]
        XCTAssertEqual(try ECDSASignature(rawRepresentation: smallRaw).derRepresentation.hexString, "3007020105020200" + "80")
    }

    func testMalformedSignatureEncodingsAreRefused() throws {
        let der = Bytes(testHex: "3045022100b292a619339f6e567a305c951c0dcbcc42d16e47f219f9e98e76e09d8770b34a02200177e60492c5a8242f76f07bfe3661bde59ec2a17ce5bd2dab2abebdf89a62e2")
        XCTAssertThrowsError(try ECDSASignature(derRepresentation: der + [0x00])) { error in
            guard case CryptoError.invalidSignatureEncoding = error else { return XCTFail("\(error)") }
        }
        XCTAssertThrowsError(try ECDSASignature(derRepresentation: Array(der.dropLast())))
        // Non-minimal length encoding (BER long form for a short length).
        XCTAssertThrowsError(try ECDSASignature(derRepresentation: [0x30, 0x81, 0x45] + der.dropFirst(2)))
        // Negative r (high bit set without a leading zero).
        XCTAssertThrowsError(try ECDSASignature(derRepresentation: Bytes(testHex: "3006020180020101")))
        XCTAssertThrowsError(try ECDSASignature(rawRepresentation: Bytes(repeating: 1, count: 63)))
        XCTAssertThrowsError(try ECDSASignature(rawRepresentation: Bytes(repeating: 1, count: 65)))
        XCTAssertThrowsError(try ECDSASignature(derRepresentation: []))
    }

    func testSignVerifyInBothEncodings() throws {
        let key = try P256PrivateKey.generate()
        let message = Bytes("unlock".utf8)
        let signature = try key.signature(for: message)
        for encoding in SignatureEncoding.allCases {
            XCTAssertNoThrow(try key.publicKey.verify(signature: signature.encoded(as: encoding), encoding: encoding, message: message))
            XCTAssertThrowsError(try key.publicKey.verify(signature: signature.encoded(as: encoding), encoding: encoding, message: message + [0])) { error in
                XCTAssertEqual(error as? CryptoError, .signatureInvalid)
            }
        }
        let other = try P256PrivateKey.generate()
        XCTAssertFalse(other.publicKey.isValidSignature(signature, for: message))
    }

    func testKeyEncodingsRoundTrip() throws {
        let key = try P256PrivateKey.generate()
        XCTAssertEqual(try P256PrivateKey(pkcs8DER: key.pkcs8DER()).publicKey, key.publicKey)
        let pem = try key.pemRepresentation()
        XCTAssertTrue(pem.hasPrefix("-----BEGIN PRIVATE KEY-----"))
        XCTAssertEqual(try P256PrivateKey(pemRepresentation: pem).publicKey, key.publicKey)
        XCTAssertEqual(try P256PrivateKey(rawScalar: key.rawScalar()).publicKey, key.publicKey)
        let pub = key.publicKey
        XCTAssertEqual(pub.sec1.count, 65)
        XCTAssertEqual(try P256PublicKey(spkiDER: pub.spkiDER), pub)
        XCTAssertEqual(try P256PublicKey(pemRepresentation: pub.pemRepresentation()), pub)
        XCTAssertEqual(pub.keyID, Array(SHA256.hash(pub.sec1).prefix(8)))
        XCTAssertFalse(key.description.contains(try key.rawScalar().hexString), "a private key never prints its scalar")
    }

    // The generator point G: scalar 1 must give it, byte for byte.
    func testRawScalarOneGivesGenerator() throws {
        let one = Bytes(repeating: 0, count: 31) + [1]
        XCTAssertEqual(try P256PrivateKey(rawScalar: one).publicKey.sec1.hexString,
                       "046b17d1f2e12c4247f8bce6e563a440f277037d812deb33a0f4a13945d898c2964fe342e2fe1a7f9b8ee7eb4a7c0f9e162bce33576b315ececbb6406837bf51f5")
    }

    func testInvalidKeysAreRefused() throws {
        let pub = try P256PrivateKey.generate().publicKey.sec1
        var offCurve = pub
        offCurve[64] ^= 1
        XCTAssertThrowsError(try P256PublicKey(sec1: offCurve)) { error in
            guard case CryptoError.invalidPublicKey = error else { return XCTFail("\(error)") }
        }
        var compressed = Array(pub.prefix(33))
        compressed[0] = 0x02 | (pub[64] & 1)
        XCTAssertThrowsError(try P256PublicKey(sec1: compressed))
        XCTAssertThrowsError(try P256PublicKey(sec1: [0x00]))
        XCTAssertThrowsError(try P256PublicKey(sec1: Bytes(repeating: 0, count: 65)))
        XCTAssertThrowsError(try P256PublicKey(spkiDER: p256SPKIPrefix + pub + [0]), "trailing garbage")
        XCTAssertThrowsError(try P256PublicKey(spkiDER: Array((p256SPKIPrefix + pub).dropLast())))
        XCTAssertThrowsError(try P256PublicKey(pemRepresentation: "-----BEGIN PUBLIC KEY-----\nAAAA\n-----END PUBLIC KEY-----\n"))
        XCTAssertThrowsError(try P256PrivateKey(rawScalar: Bytes(repeating: 0, count: 32)))
        XCTAssertThrowsError(try P256PrivateKey(rawScalar: P256Curve.order))
        XCTAssertThrowsError(try P256PrivateKey(rawScalar: Bytes(repeating: 0xff, count: 32)))
        XCTAssertThrowsError(try P256PrivateKey(rawScalar: Bytes(repeating: 1, count: 31)))
        XCTAssertThrowsError(try P256PrivateKey(pkcs8DER: [0x30, 0x00]))
        let der = try P256PrivateKey.generate().pkcs8DER()
        XCTAssertThrowsError(try P256PrivateKey(pkcs8DER: der + [0]), "trailing garbage")
        XCTAssertThrowsError(try P256PrivateKey(pemRepresentation: "not a key"))
    }

    func testECDHAgreesBothWays() throws {
        let a = try P256PrivateKey.generate(), b = try P256PrivateKey.generate()
        let ab = try a.sharedSecret(with: b.publicKey), ba = try b.sharedSecret(with: a.publicKey)
        XCTAssertEqual(ab, ba)
        XCTAssertEqual(ab.count, 32)
    }

    func testSealedBoxLayoutAndTampering() throws {
        let key = try SystemRandom().randomBytes(32)
        let box = try SealedBox(sealing: Bytes("secret".utf8), key: key, authenticating: Bytes("id-1".utf8))
        let combined = box.combined
        XCTAssertEqual(combined.count, 12 + 6 + 16)
        XCTAssertEqual(Array(combined.prefix(12)), box.nonce)
        XCTAssertEqual(try SealedBox(combined: combined).open(key: key, authenticating: Bytes("id-1".utf8)), Bytes("secret".utf8))
        // Swapped associated data (a row moved to another ID) fails.
        XCTAssertThrowsError(try SealedBox(combined: combined).open(key: key, authenticating: Bytes("id-2".utf8))) { error in
            XCTAssertEqual(error as? CryptoError, .authenticationFailed)
        }
        for index in [0, 12, combined.count - 1] {
            var tampered = combined
            tampered[index] ^= 0x40
            XCTAssertThrowsError(try SealedBox(combined: tampered).open(key: key, authenticating: Bytes("id-1".utf8)))
        }
        XCTAssertThrowsError(try SealedBox(combined: Bytes(combined.prefix(28)))) { error in
            XCTAssertEqual(error as? CryptoError, .sealedBoxTooShort(actual: 28))
        }
        XCTAssertThrowsError(try SealedBox(sealing: [], key: key))
        XCTAssertThrowsError(try SealedBox(sealing: [1], key: Array(key.prefix(16))))
    }

    func testAESGCMRefusesBadSizes() {
        XCTAssertThrowsError(try AESGCM.seal([1], key: Bytes(repeating: 0, count: 31), nonce: Bytes(repeating: 0, count: 12)))
        XCTAssertThrowsError(try AESGCM.seal([1], key: Bytes(repeating: 0, count: 32), nonce: Bytes(repeating: 0, count: 8)))
        XCTAssertThrowsError(try AESGCM.open(ciphertext: [1], tag: [1], key: Bytes(repeating: 0, count: 32), nonce: Bytes(repeating: 0, count: 12)))
    }

    func testHexParsing() {
        XCTAssertEqual(Bytes(hex: "00fFa0"), [0x00, 0xff, 0xa0])
        XCTAssertNil(Bytes(hex: "abc"))
        XCTAssertNil(Bytes(hex: "zz"))
        XCTAssertEqual(Bytes(hex: ""), [])
        XCTAssertEqual([0xde, 0xad].hexString, "dead")
    }

    func testSystemRandomProducesDistinctBytes() throws {
        let random = SystemRandom()
        XCTAssertEqual(try random.randomBytes(0), [])
        XCTAssertNotEqual(try random.randomBytes(32), try random.randomBytes(32))
    }
}

final class CryptoSelfTestTests: XCTestCase {
    func testEveryPowerOnCheckPasses() {
        let results = CryptoSelfTest.run()
        XCTAssertGreaterThanOrEqual(results.count, 9)
        for result in results { XCTAssertTrue(result.passed, result.name) }
    }
}

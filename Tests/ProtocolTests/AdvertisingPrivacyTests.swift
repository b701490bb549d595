// Advertising privacy (docs/protocol.md section 18.12): the rotating identifier, its rotation,
// and the AdvertisingKeyGrant that gives an enrolled owner phone the advertising key.
//
// To regenerate the known-answer values after an intentional format change:
//   OCK_PRINT_ADV_KAT=1 swift test --skip-build --filter AdvertisingPrivacyTests/testPrintExample
import XCTest
#if canImport(Glibc)
import Glibc
#endif
@testable import Protocol

enum AdvertisingKAT {
    /// The first 16 bytes of SHA-256("OCK1 KAT advertising key").
    static let advertisingKey = try! AdvertisingKey(bytes: Array(KAT.scalar("OCK1 KAT advertising key").prefix(16)))
    static let prand = Bytes(testHex: "5a17c3")
    /// Section 13 keys, and the pairing challenge of the section 18.6 example.
    static let phone = KAT.phoneLongTerm
    static let carIdentity = KAT.carIdentity
    static let challenge = PairingKAT.challenge

    static func values() throws -> [(String, Bytes)] {
        var out: [(String, Bytes)] = []
        out.append(("advertising key", advertisingKey.bytes))
        out.append(("identifier HMAC input", AdvertisingIdentifier.label + prand))
        out.append(("identifier HMAC", HMACSHA256.authenticationCode(key: advertisingKey.bytes,
                                                                     message: AdvertisingIdentifier.label + prand)))
        out.append(("advertising identifier", try AdvertisingIdentifier.make(prand: prand, key: advertisingKey).bytes))
        let shared = try carIdentity.sharedSecret(with: phone.publicKey)
        out.append(("grant ECDH shared secret", shared))
        let car = carIdentity.publicKey.sec1, phonePub = phone.publicKey.sec1
        out.append(("grant HKDF info", AdvertisingKeyGrantMessage.keyInfo(carIdentity: car, phone: phonePub)))
        out.append(("grant key", try AdvertisingKeyGrantMessage.grantKey(sharedSecret: shared, challenge: challenge,
                                                                         carIdentity: car, phone: phonePub)))
        out.append(("AdvertisingKeyGrant", try AdvertisingKeyGrantMessage.seal(advertisingKey, sharedSecret: shared, challenge: challenge,
                                                                               carIdentity: car, phone: phonePub).encoded()))
        return out
    }

    /// The documented values (docs/protocol.md section 18.12).
    static let expected: [(String, String)] = [
        ("advertising key", "983b0fb877e057c45cd669fcbc9e5499"),
        ("identifier HMAC input", "4f434b312d4144562d49445a17c3"),
        ("identifier HMAC", "fc6179ebc5a6e0273844eb6c00f94d601083c26d18440ff07bef0ea42b13971c"),
        ("advertising identifier", "5a17c3fc6179"),
        ("grant ECDH shared secret", "b5e19abcc878c2a045ee9978e86f186a978044ac38c481276ff63598babaa24a"),
        ("grant HKDF info",
            "4f434b312d4144562d4b45590456b2d7a739c9022a0bcd10df250545b72dd8910f9fed22091039fb03f1d6dd6b19c384"
            + "a030ade08abd30626bda3a35ba3e1cd69a68f3f770ef38eb9840dd574404b9c9c2481b3cf9abd309233c583dd8bc3f99"
            + "2324bdf85262f85f83e69723ef94545cde523a9484b2e504f03280b9103b5b2f3625b7317dc6187c62259ae106c1"),
        ("grant key", "5dc58e6ed090389d05aca8da490b4b67a2126d907dfca2eefbf5801405a42a78"),
        ("AdvertisingKeyGrant", "2401e098598df324ec569dcc3c99b0dde2ba9822eb4fd23252171375308c7ccd9100"),
    ]
}

/// A phone key that can sign but not do ECDH (the grant cannot reach it).
private struct SignOnlyKey: ProtocolSigner {
    let key: P256PrivateKey
    var publicKey: P256PublicKey { key.publicKey }
    func signature(for message: Bytes) throws -> ECDSASignature { try key.signature(for: message) }
}

final class AdvertisingPrivacyTests: XCTestCase {
    let key = AdvertisingKAT.advertisingKey
    let otherKey = try! AdvertisingKey(bytes: Bytes(repeating: 0x42, count: 16))

    func expected(_ name: String) throws -> Bytes {
        Bytes(testHex: try XCTUnwrap(AdvertisingKAT.expected.first { $0.0 == name }?.1, name))
    }

    // MARK: Known answers

    func testEveryValueFromTheFormulas() throws {
        let computed = try AdvertisingKAT.values()
        XCTAssertEqual(computed.map(\.0), AdvertisingKAT.expected.map(\.0))
        for ((name, bytes), (_, hex)) in zip(computed, AdvertisingKAT.expected) {
            XCTAssertEqual(bytes.hexString, hex, name)
        }
        XCTAssertEqual(AdvertisingIdentifier.label.hexString, "4f434b312d4144562d4944")
        XCTAssertEqual(AdvertisingKeyGrantMessage.keyLabel.hexString, "4f434b312d4144562d4b4559")
        XCTAssertEqual(try expected("AdvertisingKeyGrant").count, AdvertisingKeyGrantMessage.length)
    }

    func testBothSidesOfTheStaticECDHAgree() throws {
        XCTAssertEqual(try AdvertisingKAT.phone.sharedSecret(with: AdvertisingKAT.carIdentity.publicKey),
                       try expected("grant ECDH shared secret"))
    }

    func testThePhoneOpensTheDocumentedGrant() throws {
        let grant = try AdvertisingKeyGrantMessage.decode(try expected("AdvertisingKeyGrant"))
        let shared = try AdvertisingKAT.phone.sharedSecret(with: AdvertisingKAT.carIdentity.publicKey)
        let opened = try grant.open(sharedSecret: shared, challenge: AdvertisingKAT.challenge,
                                    carIdentity: AdvertisingKAT.carIdentity.publicKey.sec1, phone: AdvertisingKAT.phone.publicKey.sec1)
        XCTAssertEqual(opened.bytes, try expected("advertising key"))
        XCTAssertTrue(AdvertisingIdentifier.resolve(try expected("advertising identifier"), key: opened))
    }

    /// The car engine and PhonePairingSession produce the 18.6 pairing and then this grant.
    func testTheEnginesProduceTheGrantAfterTheDocumentedPairing() throws {
        let carSigner = PinnedSigner(key: PairingKAT.carIdentity,
                                     message: Bytes(testHex: try XCTUnwrap(PairingKAT.expected.first { $0.0 == "pairing car signature input" }?.1)),
                                     fixed: try ECDSASignature(rawRepresentation: PairingKAT.carSignature))
        var configuration = CarProtocolConfiguration(vehicleID: PairingKAT.vehicleID)
        configuration.advertisingKey = key
        let keychain = SharedKeychain(Keychain())
        var car = CarProtocolEngine(configuration: configuration, identity: carSigner, keys: keychain, certificateVerifier: keychain,
                                    random: ScriptedRandom(PairingKAT.carDraws))
        let now = ProtocolTime(monotonicMillis: 1_000, wallSeconds: 1_767_225_600, wallClockTrusted: false)
        let (code, _) = try car.openPairingWindow(now: now)
        var phone = PhonePairingSession(longTermKey: PairingKAT.phone, code: code, expectedVehicleID: PairingKAT.vehicleID,
                                        random: ScriptedRandom([PairingKAT.xDraw]))
        let link = LinkID(1)
        let challenge = try XCTUnwrap(car.receive(try phone.start(), from: link, now: now).sent.first)
        guard case .send(let proof) = try phone.receive(challenge) else { return XCTFail("no proof") }
        let enroll = try XCTUnwrap(car.receive(proof, from: link, now: now).enrollments.first)
        _ = try keychain.update { (k: inout Keychain) throws(FaultCode) in try k.enroll(enroll, now: now) }
        let sent = car.completeEnrollment(enroll.token, result: nil, now: now).sent
        XCTAssertEqual(sent.count, 2, "PairingResult, then the grant")
        XCTAssertEqual(sent.first?.hexString, PairingKAT.expected.first { $0.0 == "PairingResult" }?.1)
        XCTAssertEqual(sent.last, try expected("AdvertisingKeyGrant"))
        guard case .paired = try phone.receive(sent[0]) else { return XCTFail("not paired") }
        XCTAssertEqual(try phone.receiveGrant(sent[1]), key)
    }

    func testDocumentShowsTheSameValues() throws {
        let doc = try XCTUnwrap(readRepositoryFile("docs/protocol.md"), "docs/protocol.md missing")
        let blocks = DocumentHexBlocks.blocks(in: doc)
        for (name, hex) in AdvertisingKAT.expected {
            XCTAssertTrue(blocks.contains(hex), "docs/protocol.md lacks \(name)")
        }
        XCTAssertTrue(doc.contains("| `0x24` | AdvertisingKeyGrant |"), "message table")
    }

    func testPrintExample() throws {
        guard getenv("OCK_PRINT_ADV_KAT") != nil else { return }
        for (name, bytes) in try AdvertisingKAT.values() { print("ADVKAT|\(name)|\(bytes.count)|\(bytes.hexString)") }
    }

    // MARK: Identifier

    func testAnIdentifierResolvesOnlyUnderItsKey() throws {
        let identifier = try AdvertisingIdentifier.make(prand: AdvertisingKAT.prand, key: key)
        XCTAssertEqual(identifier.prand, AdvertisingKAT.prand)
        XCTAssertTrue(AdvertisingIdentifier.resolve(identifier.bytes, key: key))
        XCTAssertFalse(AdvertisingIdentifier.resolve(identifier.bytes, key: otherKey), "another car's key")
        for index in 0..<AdvertisingIdentifier.length {
            var flipped = identifier.bytes
            flipped[index] ^= 0x01
            XCTAssertFalse(AdvertisingIdentifier.resolve(flipped, key: key), "byte \(index) changed")
        }
        XCTAssertFalse(AdvertisingIdentifier.resolve(Array(identifier.bytes.prefix(5)), key: key))
        XCTAssertFalse(AdvertisingIdentifier.resolve(identifier.bytes + [0], key: key))
        XCTAssertFalse(AdvertisingIdentifier.resolve([], key: key))
    }

    func testIdentifierInputsAreChecked() throws {
        XCTAssertThrowsError(try AdvertisingIdentifier.make(prand: [1, 2], key: key))
        XCTAssertThrowsError(try AdvertisingIdentifier.make(prand: [1, 2, 3, 4], key: key))
        XCTAssertThrowsError(try AdvertisingIdentifier(bytes: [1, 2, 3, 4, 5]))
        XCTAssertThrowsError(try AdvertisingKey(bytes: Bytes(repeating: 1, count: 15)))
        XCTAssertThrowsError(try AdvertisingKey(bytes: Bytes(repeating: 1, count: 17)))
        XCTAssertThrowsError(try AdvertisingIdentifier.random(key: key, random: FailingRandom()))
        let drawn = try AdvertisingIdentifier.random(key: key, random: ScriptedRandom([AdvertisingKAT.prand]))
        XCTAssertEqual(drawn.bytes, try expected("advertising identifier"))
    }

    func testTheKeyNeverShowsInDescriptions() throws {
        let hex = key.bytes.hexString
        var dumped = ""
        dump(key, to: &dumped)
        var configuration = CarProtocolConfiguration(vehicleID: Fixtures.vehicleID)
        configuration.advertisingKey = key
        for text in ["\(key)", String(reflecting: key), dumped, "\(configuration)", String(reflecting: configuration)] {
            XCTAssertFalse(text.contains(hex), text)
        }
        XCTAssertEqual(key, try AdvertisingKey(bytes: key.bytes))
        XCTAssertNotEqual(key, otherKey)
    }

    // MARK: Rotation

    func testRotationDrawsAtStartEveryIntervalAndOnDemand() throws {
        let prands: [Bytes] = [[1, 1, 1], [2, 2, 2], [3, 3, 3], [4, 4, 4]]
        var rotation = try AdvertisingIdentifierRotation(key: key, now: 5_000, random: ScriptedRandom(prands))
        XCTAssertEqual(rotation.intervalMillis, 15 * 60_000, "15 minutes by default")
        XCTAssertEqual(rotation.current.prand, prands[0], "a fresh identifier at start")
        XCTAssertTrue(AdvertisingIdentifier.resolve(rotation.current.bytes, key: key))
        XCTAssertEqual(rotation.nextRotationMillis, 5_000 + 900_000)

        XCTAssertFalse(try rotation.update(now: 5_000 + 899_999))
        XCTAssertEqual(rotation.current.prand, prands[0])
        XCTAssertTrue(try rotation.update(now: 5_000 + 900_000))
        XCTAssertEqual(rotation.current.prand, prands[1])
        XCTAssertEqual(rotation.current, try AdvertisingIdentifier.make(prand: prands[1], key: key))
        XCTAssertEqual(rotation.nextRotationMillis, 5_000 + 1_800_000)

        // Monotonic time that jumped (suspend): one rotation, and the interval restarts from now.
        XCTAssertTrue(try rotation.update(now: 10_000_000))
        XCTAssertEqual(rotation.current.prand, prands[2])
        XCTAssertEqual(rotation.nextRotationMillis, 10_900_000)

        // Forced (the controller changed its address): new identifier, interval restarts.
        try rotation.rotate(now: 10_100_000)
        XCTAssertEqual(rotation.current.prand, prands[3])
        XCTAssertEqual(rotation.nextRotationMillis, 11_000_000)

        // A failing generator keeps the old identifier and reports it.
        XCTAssertThrowsError(try rotation.update(now: 11_000_000)) {
            XCTAssertEqual($0 as? AdvertisingIdentifierRotation.Failure, .randomFailed)
        }
        XCTAssertEqual(rotation.current.prand, prands[3])
    }

    func testTheIntervalIsOneToSixtyMinutes() throws {
        for millis: UInt64 in [60_000, 3_600_000] {
            let rotation = try AdvertisingIdentifierRotation(key: key, now: 0, intervalMillis: millis, random: SeededRandom("rot"))
            XCTAssertEqual(rotation.nextRotationMillis, millis)
        }
        for millis: UInt64 in [0, 59_999, 3_600_001] {
            XCTAssertThrowsError(try AdvertisingIdentifierRotation(key: key, now: 0, intervalMillis: millis)) {
                XCTAssertEqual($0 as? AdvertisingIdentifierRotation.Failure, .intervalOutOfRange(millis))
            }
        }
        XCTAssertThrowsError(try AdvertisingIdentifierRotation(key: key, now: 0, random: FailingRandom())) {
            XCTAssertEqual($0 as? AdvertisingIdentifierRotation.Failure, .randomFailed)
        }
    }

    func testTwoStartsAdvertiseDifferentIdentifiers() throws {
        let first = try AdvertisingIdentifierRotation(key: key, now: 0).current
        let second = try AdvertisingIdentifierRotation(key: key, now: 0).current
        XCTAssertNotEqual(first.prand, second.prand, "2^-24 chance of a false failure")
        XCTAssertTrue(AdvertisingIdentifier.resolve(first.bytes, key: key))
        XCTAssertTrue(AdvertisingIdentifier.resolve(second.bytes, key: key))
    }

    // MARK: Grant message

    private func openKAT(_ bytes: Bytes, phone: P256PrivateKey = AdvertisingKAT.phone, challenge: Bytes = AdvertisingKAT.challenge,
                         carIdentity: P256PublicKey = AdvertisingKAT.carIdentity.publicKey) throws -> AdvertisingKey {
        let grant = try AdvertisingKeyGrantMessage.decode(bytes)
        return try grant.open(sharedSecret: try phone.sharedSecret(with: carIdentity), challenge: challenge,
                              carIdentity: carIdentity.sec1, phone: phone.publicKey.sec1)
    }

    func testATamperedGrantIsRefused() throws {
        let good = try expected("AdvertisingKeyGrant")
        XCTAssertEqual(try openKAT(good), key)
        for index in 2..<good.count {
            var bad = good
            bad[index] ^= 0x80
            XCTAssertThrowsError(try openKAT(bad), "byte \(index)") { XCTAssertEqual($0 as? CryptoError, .authenticationFailed) }
        }
    }

    func testAGrantForAnotherPhoneChallengeOrCarIsRefused() throws {
        let good = try expected("AdvertisingKeyGrant")
        XCTAssertThrowsError(try openKAT(good, phone: Fixtures.key("another phone"))) {
            XCTAssertEqual($0 as? CryptoError, .authenticationFailed)
        }
        var challenge = AdvertisingKAT.challenge
        challenge[31] ^= 1
        XCTAssertThrowsError(try openKAT(good, challenge: challenge)) { XCTAssertEqual($0 as? CryptoError, .authenticationFailed) }
        XCTAssertThrowsError(try openKAT(good, carIdentity: Fixtures.key("another car").publicKey)) {
            XCTAssertEqual($0 as? CryptoError, .authenticationFailed)
        }
    }

    func testTheGrantCodecIsStrict() throws {
        let good = try expected("AdvertisingKeyGrant")
        XCTAssertEqual(try AdvertisingKeyGrantMessage.decode(good).encoded(), good)
        guard case .advertisingKeyGrant = try Message.decode(good) else { return XCTFail("not dispatched") }
        for length in 0..<good.count {
            XCTAssertThrowsError(try AdvertisingKeyGrantMessage.decode(Array(good.prefix(length))), "length \(length)")
            XCTAssertThrowsError(try Message.decode(Array(good.prefix(length))), "length \(length)")
        }
        XCTAssertThrowsError(try Message.decode(good + [0])) { XCTAssertEqual($0 as? MessageFormatError, .trailingBytes(count: 1)) }
        var version = good
        version[1] = 0x02
        XCTAssertThrowsError(try Message.decode(version)) { XCTAssertEqual($0 as? MessageFormatError, .unsupportedVersion(2)) }
        XCTAssertThrowsError(try AdvertisingKeyGrantMessage(ciphertext: Bytes(repeating: 0, count: 15), tag: Bytes(repeating: 0, count: 16)))
        XCTAssertThrowsError(try AdvertisingKeyGrantMessage(ciphertext: Bytes(repeating: 0, count: 16), tag: Bytes(repeating: 0, count: 15)))
    }

    func testTheDecoderShowsTheHeaderOnly() throws {
        let good = try expected("AdvertisingKeyGrant")
        let text = MessageDecoder.describe(good)
        XCTAssertEqual(text, """
            AdvertisingKeyGrant (car -> phone, encrypted), 34 bytes, version 1
              ciphertext:         16 bytes
              tag:                \(good.suffix(16).hexString)
              (contents need the enrolled phone key)
            """)
        XCTAssertFalse(text.contains(key.bytes.hexString))
        XCTAssertFalse(text.contains(Array(good[2..<18]).hexString), "no ciphertext bytes")
    }

    // MARK: Car engine and phone session

    private func rig(advertising: AdvertisingKey?, owners: [P256PrivateKey] = [], capacity: Int = Keychain.defaultCapacity) -> KeysRig {
        KeysRig(owners: owners, capacity: capacity) { $0.advertisingKey = advertising }
    }

    /// Hello, challenge and proof; returns what the car sent after the proof, and the phone.
    private func enroll(_ rig: inout KeysRig, phoneKey: any ProtocolSigner = KeysFixtures.owner, code: PairingCode? = nil,
                        link: LinkID = LinkID(50)) throws -> (sent: [Bytes], phone: PhonePairingSession) {
        let opened = try rig.car.openPairingWindow(now: rig.now).code
        var phone = PhonePairingSession(longTermKey: phoneKey, code: code ?? opened, expectedVehicleID: Fixtures.vehicleID)
        let challenge = try XCTUnwrap(rig.toCar(try phone.start(), link: link).sent(to: link).first)
        guard case .send(let proof) = try phone.receive(challenge) else { throw XCTSkip("no proof") }
        return (rig.toCar(proof, link: link).sent(to: link), phone)
    }

    func testTheCarGrantsTheKeyAfterASuccessfulPairingResult() throws {
        var rig = rig(advertising: key)
        var (sent, phone) = try enroll(&rig)
        XCTAssertEqual(sent.count, 2)
        XCTAssertEqual(try PairingResultMessage.decode(sent[0]).result, 0)
        XCTAssertEqual(sent[1].count, AdvertisingKeyGrantMessage.length)
        XCTAssertEqual(sent[1].first, 0x24)
        guard case .paired = try phone.receive(sent[0]) else { return XCTFail("not paired") }
        let granted = try phone.receiveGrant(sent[1])
        XCTAssertEqual(granted, key)
        // One grant per enrollment.
        XCTAssertThrowsError(try phone.receiveGrant(sent[1])) {
            guard case .unexpectedMessage = $0 as? PhoneError else { return XCTFail("\($0)") }
        }
    }

    func testNoGrantAfterARefusedEnrollmentOrAWrongCode() throws {
        var full = rig(advertising: key, owners: [KeysFixtures.owner], capacity: 1)
        let refused = try enroll(&full, phoneKey: Fixtures.key("second owner")).sent
        XCTAssertEqual(refused.count, 1, "the PairingResult only")
        XCTAssertEqual(try PairingResultMessage.decode(refused[0]).fault, .keychainFull)

        var wrong = rig(advertising: key)
        let code = try wrong.car.openPairingWindow(now: wrong.now).code
        let other = try PairingCode(code.text == "000000" ? "000001" : "000000")
        var (sent, _) = try enroll(&wrong, code: other)
        XCTAssertEqual(sent.count, 1)
        XCTAssertEqual(try FaultMessage.decode(sent[0]).fault, .wrongPairingCode)
        XCTAssertFalse(sent.contains { $0.first == 0x24 })
        sent = []
    }

    func testACarWithoutAnAdvertisingKeySendsNoGrant() throws {
        var rig = rig(advertising: nil)
        var (sent, phone) = try enroll(&rig)
        XCTAssertEqual(sent.count, 1)
        guard case .paired = try phone.receive(sent[0]) else { return XCTFail("not paired") }
    }

    func testThePhoneRefusesAGrantOutOfPlace() throws {
        var rig = rig(advertising: key)
        var (sent, phone) = try enroll(&rig)
        // Before the PairingResult: not yet paired.
        XCTAssertThrowsError(try phone.receiveGrant(sent[1])) {
            guard case .unexpectedMessage = $0 as? PhoneError else { return XCTFail("\($0)") }
        }
        // A grant through `receive` is out of order too.
        var copy = phone
        XCTAssertThrowsError(try copy.receive(sent[1]))
        guard case .paired = try phone.receive(sent[0]) else { return XCTFail("not paired") }
        var other = phone
        XCTAssertThrowsError(try other.receiveGrant(sent[0])) {
            guard case .unexpectedMessage = $0 as? PhoneError else { return XCTFail("\($0)") }
        }
        var truncated = phone
        XCTAssertThrowsError(try truncated.receiveGrant(Array(sent[1].dropLast()))) {
            guard case .malformed = $0 as? PhoneError else { return XCTFail("\($0)") }
        }
        var tampered = phone
        var bad = sent[1]
        bad[20] ^= 1
        XCTAssertThrowsError(try tampered.receiveGrant(bad)) { XCTAssertEqual($0 as? PhoneError, .advertisingKeyGrantInvalid) }
        sent = []
    }

    func testAGrantForAnotherPhoneDoesNotOpen() throws {
        // Two enrollments on two links: each phone gets a grant it alone can open.
        var rig = rig(advertising: key)
        var (sentA, phoneA) = try enroll(&rig, phoneKey: KeysFixtures.owner, link: LinkID(60))
        var (sentB, phoneB) = try enroll(&rig, phoneKey: Fixtures.key("second owner"), link: LinkID(61))
        guard case .paired = try phoneA.receive(sentA[0]), case .paired = try phoneB.receive(sentB[0]) else { return XCTFail() }
        XCTAssertNotEqual(sentA[1], sentB[1])
        var swapped = phoneA
        XCTAssertThrowsError(try swapped.receiveGrant(sentB[1])) { XCTAssertEqual($0 as? PhoneError, .advertisingKeyGrantInvalid) }
        XCTAssertEqual(try phoneA.receiveGrant(sentA[1]), key)
        XCTAssertEqual(try phoneB.receiveGrant(sentB[1]), key)
        sentA = []; sentB = []
    }

    func testAPhoneKeyWithoutECDHCannotReceiveTheKey() throws {
        var rig = rig(advertising: key)
        var (sent, phone) = try enroll(&rig, phoneKey: SignOnlyKey(key: KeysFixtures.owner))
        guard case .paired = try phone.receive(sent[0]) else { return XCTFail("not paired") }
        XCTAssertThrowsError(try phone.receiveGrant(sent[1])) { XCTAssertEqual($0 as? PhoneError, .keyAgreementUnavailable) }
        sent = []
    }

    func testTheCarRefusesAGrantFromAPhone() throws {
        var rig = rig(advertising: key)
        let actions = rig.toCar(try expected("AdvertisingKeyGrant"), link: LinkID(9))
        XCTAssertEqual(actions.cleartextFault, .unexpectedMessage)
    }
}

// The worked example of docs/protocol.md ("Known-answer example"), reproduced byte for byte:
// once from the spec's formulas, once by running the real car engine and phone session.
//
// To regenerate after an intentional protocol change (new signatures, new values):
//   OCK_PRINT_KAT=1 swift test --scratch-path .build-proto --filter KnownAnswerTests/testPrintFreshExample
import XCTest
#if canImport(Glibc)
import Glibc
#endif
@testable import Protocol

enum KAT {
    static func scalar(_ label: String) -> Bytes { SHA256.hash(Array(label.utf8)) }
    static let phoneLongTerm = Fixtures.key("OCK1 KAT phone long-term key")
    static let phoneEphemeral = Fixtures.key("OCK1 KAT phone ephemeral key")
    static let carIdentity = Fixtures.key("OCK1 KAT car identity key")
    static let carEphemeral = Fixtures.key("OCK1 KAT car ephemeral key")
    static let challenge = scalar("OCK1 KAT challenge")
    static let vehicleID = try! VehicleID("OCK-KAT-VEHICLE-1")
    static let carTime: UInt32 = 1_767_225_600      // 2026-01-01T00:00:00Z, trusted
    static let phoneTimestamp: UInt32 = 1_767_225_601
    static let expiresAt: UInt32 = 1_767_225_610
    static let vehicleStateAfterUnlock: VehicleState = [.trunkLocked]

    /// The two randomized signatures, generated once; implementations verify them, they do not
    /// reproduce them.
    static let carSignatureRaw = Bytes(testHex: "e5883c5e5b75735d88215617d3f4dfdfd106a7ab44397cb221136177c62062b3b5887a45d400633be6beb8240fa546ae01ce627812730c1898e237b8d27b99b8")
    static let phoneSignatureDER = Bytes(testHex: "304502206186917260351e5dc2c5349635e70d389a38ff66b49028d7895811a785c78a1b022100930c1aca693f6e00df9a88b696a9011ef38a58ecc587b810c9f29d180b1802b0")

    /// Every value of the example, in the order the document lists them.
    static func values(carSignature: Bytes, phoneSignature: Bytes) throws -> [(String, Bytes)] {
        var out: [(String, Bytes)] = []
        out.append(("phone long-term scalar", scalar("OCK1 KAT phone long-term key")))
        out.append(("phone long-term public key", phoneLongTerm.publicKey.sec1))
        out.append(("keyID", KeyID(publicKey: phoneLongTerm.publicKey).bytes))
        out.append(("phone ephemeral scalar", scalar("OCK1 KAT phone ephemeral key")))
        out.append(("phone ephemeral public key", phoneEphemeral.publicKey.sec1))
        out.append(("car identity scalar", scalar("OCK1 KAT car identity key")))
        out.append(("car identity public key", carIdentity.publicKey.sec1))
        out.append(("car ephemeral scalar", scalar("OCK1 KAT car ephemeral key")))
        out.append(("car ephemeral public key", carEphemeral.publicKey.sec1))
        out.append(("challenge", challenge))

        let hello = try HelloMessage(keyID: KeyID(publicKey: phoneLongTerm.publicKey),
                                     ephemeralPublicKey: phoneEphemeral.publicKey.sec1).encoded()
        out.append(("Hello", hello))
        let body = ChallengeMessage.body(challenge: challenge, carEphemeralPublicKey: carEphemeral.publicKey.sec1, vehicleID: vehicleID)
        out.append(("Challenge body", body))
        let input = ChallengeMessage.signatureInput(hello: hello, body: body)
        out.append(("car signature input", input))
        out.append(("SHA-256 of car signature input", SHA256.hash(input)))
        out.append(("car signature (raw r||s)", carSignature))
        let challengeMessage = body + carSignature
        out.append(("Challenge", challengeMessage))

        let signed = AuthResponseMessage.signedData(challenge: challenge, timestamp: phoneTimestamp)
        out.append(("AuthResponse signed data", signed))
        out.append(("SHA-256 of AuthResponse signed data", SHA256.hash(signed)))
        out.append(("phone signature (DER)", phoneSignature))
        let auth = try AuthResponseMessage(challenge: challenge, timestamp: phoneTimestamp, signature: phoneSignature).encoded()
        out.append(("AuthResponse", auth))

        let shared = try carEphemeral.sharedSecret(with: phoneEphemeral.publicKey)
        out.append(("ECDH shared secret", shared))
        let th = KeySchedule.transcriptHash(hello: hello, challenge: challengeMessage, authResponse: auth)
        out.append(("transcript hash TH", th))
        let keys = try KeySchedule.deriveKeys(sharedSecret: shared, challenge: challenge, transcriptHash: th)
        out.append(("keyPhoneToCar", keys.phoneToCar))
        out.append(("keyCarToPhone", keys.carToPhone))
        out.append(("keyRanging", keys.ranging))

        func record(_ type: MessageType, _ direction: Direction, _ counter: UInt64, _ key: Bytes, _ plaintext: Bytes, _ name: String) throws {
            let header = EncryptedRecord.header(type: type, counter: counter)
            let nonce = RecordNonce.make(direction: direction, counter: counter)
            let sealed = try AESGCM.seal(plaintext, key: key, nonce: nonce, authenticating: header)
            out.append(("\(name) plaintext", plaintext))
            out.append(("\(name) nonce", nonce))
            out.append(("\(name) header (AAD)", header))
            out.append(("\(name)", header + sealed.ciphertext + sealed.tag))
        }
        let accepted = SessionAcceptedBody(role: .owner, permissions: .all, notBefore: 0, notAfter: .max,
                                           carTime: carTime, clockTrusted: true, sessionLifetime: 300)
        try record(.sessionAccepted, .carToPhone, 0, keys.carToPhone, accepted.encoded(), "SessionAccepted")
        try record(.command, .phoneToCar, 1, keys.phoneToCar,
                   CommandBody(command: .unlock, expiresAt: expiresAt).encoded(), "Command")
        try record(.response, .carToPhone, 1, keys.carToPhone,
                   ResponseBody(command: .unlock, fault: nil, vehicleState: vehicleStateAfterUnlock, carTime: carTime).encoded(),
                   "Response")
        return out
    }

    /// The documented values (generated by `testPrintFreshExample`, pasted into the doc too).
    static let expected: [(String, String)] = [
        ("phone long-term scalar", "0954460db4ee1dc733dd9c29c10691510bbd5f8e6c043abf1c1f2a398900457a"),
        ("phone long-term public key",
            "04b9c9c2481b3cf9abd309233c583dd8bc3f992324bdf85262f85f83e69723ef94545cde523a9484b2e504f03280b910"
            + "3b5b2f3625b7317dc6187c62259ae106c1"),
        ("keyID", "80cfa36924866af5"),
        ("phone ephemeral scalar", "df89e131456c2811d86e4ba15ac115139a0a8b27d25d885a5717d9d1524db478"),
        ("phone ephemeral public key",
            "04505099611376290b90eadf185311a0fbe95b8770bc08575f6761cb436002024d60c9f160401fd5833cb5a9d8e387e9"
            + "056be2b806772d3500b928769e771cb6be"),
        ("car identity scalar", "47103f79367dcbe55645c5f18b28b0d49e14f259861fb064b5969d55d7e1629a"),
        ("car identity public key",
            "0456b2d7a739c9022a0bcd10df250545b72dd8910f9fed22091039fb03f1d6dd6b19c384a030ade08abd30626bda3a35"
            + "ba3e1cd69a68f3f770ef38eb9840dd5744"),
        ("car ephemeral scalar", "32560f40b2f5ef0fefa96c92473b1ead6dbb89b8ad39edfb577986105490a2f9"),
        ("car ephemeral public key",
            "041bad3eac537dcba56ec90680bb5d4b359ef8e2a9c3e2ff030ea0c9786012477219a8106f4a8d07e0f4b100fd2251aa"
            + "c6ffb27cd0ed3081ed552dd6d79738b741"),
        ("challenge", "9ff736145ecaadfc0e4381eecccacca1d99f5367142c9924e2b0624d8f0cc259"),
        ("Hello",
            "010180cfa36924866af504505099611376290b90eadf185311a0fbe95b8770bc08575f6761cb436002024d60c9f16040"
            + "1fd5833cb5a9d8e387e9056be2b806772d3500b928769e771cb6be0000"),
        ("Challenge body",
            "02019ff736145ecaadfc0e4381eecccacca1d99f5367142c9924e2b0624d8f0cc259041bad3eac537dcba56ec90680bb"
            + "5d4b359ef8e2a9c3e2ff030ea0c9786012477219a8106f4a8d07e0f4b100fd2251aac6ffb27cd0ed3081ed552dd6d797"
            + "38b741114f434b2d4b41542d56454849434c452d31"),
        ("car signature input",
            "4f434b312d4348414c4c454e4745010180cfa36924866af504505099611376290b90eadf185311a0fbe95b8770bc0857"
            + "5f6761cb436002024d60c9f160401fd5833cb5a9d8e387e9056be2b806772d3500b928769e771cb6be000002019ff736"
            + "145ecaadfc0e4381eecccacca1d99f5367142c9924e2b0624d8f0cc259041bad3eac537dcba56ec90680bb5d4b359ef8"
            + "e2a9c3e2ff030ea0c9786012477219a8106f4a8d07e0f4b100fd2251aac6ffb27cd0ed3081ed552dd6d79738b741114f"
            + "434b2d4b41542d56454849434c452d31"),
        ("SHA-256 of car signature input", "ed9b44589034e830f5986c2f3b145c15752d9def0dc209fa7171069226d58448"),
        ("car signature (raw r||s)",
            "e5883c5e5b75735d88215617d3f4dfdfd106a7ab44397cb221136177c62062b3b5887a45d400633be6beb8240fa546ae"
            + "01ce627812730c1898e237b8d27b99b8"),
        ("Challenge",
            "02019ff736145ecaadfc0e4381eecccacca1d99f5367142c9924e2b0624d8f0cc259041bad3eac537dcba56ec90680bb"
            + "5d4b359ef8e2a9c3e2ff030ea0c9786012477219a8106f4a8d07e0f4b100fd2251aac6ffb27cd0ed3081ed552dd6d797"
            + "38b741114f434b2d4b41542d56454849434c452d31e5883c5e5b75735d88215617d3f4dfdfd106a7ab44397cb2211361"
            + "77c62062b3b5887a45d400633be6beb8240fa546ae01ce627812730c1898e237b8d27b99b8"),
        ("AuthResponse signed data", "9ff736145ecaadfc0e4381eecccacca1d99f5367142c9924e2b0624d8f0cc25901b95569"),
        ("SHA-256 of AuthResponse signed data", "4ff9e50ab9f861ffeb9e6aafe1bb315766b17f0b710ad2a354b1cd6f3defc44d"),
        ("phone signature (DER)",
            "304502206186917260351e5dc2c5349635e70d389a38ff66b49028d7895811a785c78a1b022100930c1aca693f6e00df"
            + "9a88b696a9011ef38a58ecc587b810c9f29d180b1802b0"),
        ("AuthResponse",
            "aabb019ff736145ecaadfc0e4381eecccacca1d99f5367142c9924e2b0624d8f0cc25901b95569304502206186917260"
            + "351e5dc2c5349635e70d389a38ff66b49028d7895811a785c78a1b022100930c1aca693f6e00df9a88b696a9011ef38a"
            + "58ecc587b810c9f29d180b1802b0"),
        ("ECDH shared secret", "4e6a47b7d1a4ca88dd1c2975f467f76513a0ca3c095119cbe921660795165469"),
        ("transcript hash TH", "4b4ec759bf9ab1f78a529813874620adce0bf6e534c3b5cb68c5b972390e9447"),
        ("keyPhoneToCar", "568a9db00f0b3bcb0667e0c07cc620bb07736ee173db2f97366b99d6917622c4"),
        ("keyCarToPhone", "08d46e0183da8ef1f12052c3c9121c04966f8f1d35b886ac1ae9806625bcc709"),
        ("keyRanging", "b1b1fe22a9f9c94ce6e75964cec49808d0e744e25e5eac8f49159517603085ef"),
        ("SessionAccepted plaintext", "011f00000000ffffffff6955b90001012c"),
        ("SessionAccepted nonce", "020000000000000000000000"),
        ("SessionAccepted header (AAD)", "03010000000000000000"),
        ("SessionAccepted", "030100000000000000006c417d9cac717fb7e0bc06cb4694cd9cf5a96c5ad8eea8ed19816017e16973f477"),
        ("Command plaintext", "016955b90a00"),
        ("Command nonce", "010000000000000000000001"),
        ("Command header (AAD)", "10010000000000000001"),
        ("Command", "10010000000000000001b9439ac39390da980619f989aa957adf3f8147690d85"),
        ("Response plaintext", "01000000106955b900"),
        ("Response nonce", "020000000000000000000001"),
        ("Response header (AAD)", "11010000000000000001"),
        ("Response", "110100000000000000010bc21a5ba4be464c21602f5c3d41da8cc948b3b60eadc2aa38"),
    ]
}

final class KnownAnswerTests: XCTestCase {
    func testGivenSignaturesVerify() throws {
        let values = Dictionary(uniqueKeysWithValues: try KAT.values(carSignature: KAT.carSignatureRaw, phoneSignature: KAT.phoneSignatureDER))
        let carSignature = try ECDSASignature(rawRepresentation: KAT.carSignatureRaw)
        XCTAssertTrue(KAT.carIdentity.publicKey.isValidSignature(carSignature, for: try XCTUnwrap(values["car signature input"])))
        let phoneSignature = try ECDSASignature(derRepresentation: KAT.phoneSignatureDER)
        XCTAssertTrue(KAT.phoneLongTerm.publicKey.isValidSignature(phoneSignature, for: try XCTUnwrap(values["AuthResponse signed data"])))
        XCTAssertNotEqual(KAT.phoneSignatureDER.count, 64, "a 64-byte DER signature would be read as raw")
    }

    func testEveryValueFromTheFormulas() throws {
        let computed = try KAT.values(carSignature: KAT.carSignatureRaw, phoneSignature: KAT.phoneSignatureDER)
        XCTAssertEqual(computed.map(\.0), KAT.expected.map(\.0))
        for ((name, bytes), (_, hex)) in zip(computed, KAT.expected) {
            XCTAssertEqual(bytes.hexString, hex, name)
        }
    }

    func testTheEnginesProduceTheDocumentedBytes() throws {
        let expected = Dictionary(uniqueKeysWithValues: KAT.expected)
        let input = try XCTUnwrap(expected["car signature input"])
        let signed = try XCTUnwrap(expected["AuthResponse signed data"])
        let carSigner = PinnedSigner(key: KAT.carIdentity, message: Bytes(testHex: input),
                                     fixed: try ECDSASignature(rawRepresentation: KAT.carSignatureRaw))
        let phoneSigner = PinnedSigner(key: KAT.phoneLongTerm, message: Bytes(testHex: signed),
                                       fixed: try ECDSASignature(derRepresentation: KAT.phoneSignatureDER))
        var config = CarProtocolConfiguration(vehicleID: KAT.vehicleID)
        config.sessionLifetimeSeconds = 300
        var car = CarProtocolEngine(configuration: config, identity: carSigner,
                                    keys: InMemoryKeyDirectory([KeyRecord(publicKey: KAT.phoneLongTerm.publicKey, role: .owner, permissions: .all)]),
                                    random: ScriptedRandom([KAT.challenge]),
                                    ephemeralKeys: FixedEphemeralKeySource([KAT.carEphemeral]))
        var phoneConfig = PhoneConfiguration(longTermKey: phoneSigner, carIdentityKey: KAT.carIdentity.publicKey, vehicleID: KAT.vehicleID)
        phoneConfig.ephemeralKeys = FixedEphemeralKeySource([KAT.phoneEphemeral])
        phoneConfig.signatureEncoding = .der
        phoneConfig.commandLifetimeSeconds = 10
        var phone = PhoneProtocolSession(configuration: phoneConfig)
        let carNow = ProtocolTime(monotonicMillis: 1_000, wallSeconds: Int64(KAT.carTime), wallClockTrusted: true)
        let phoneNow = ProtocolTime(monotonicMillis: 77_000, wallSeconds: Int64(KAT.phoneTimestamp), wallClockTrusted: true)
        let link = LinkID(1)

        let hello = try phone.start()
        XCTAssertEqual(hello.hexString, expected["Hello"])
        let challenge = try XCTUnwrap(car.receive(hello, from: link, now: carNow).sent.first)
        XCTAssertEqual(challenge.hexString, expected["Challenge"])
        guard case .send(let auth) = try phone.receive(challenge, now: phoneNow) else { return XCTFail() }
        XCTAssertEqual(auth.hexString, expected["AuthResponse"])
        let accepted = try XCTUnwrap(car.receive(auth, from: link, now: carNow).sent.first)
        XCTAssertEqual(accepted.hexString, expected["SessionAccepted"])
        guard case .established = try phone.receive(accepted, now: phoneNow) else { return XCTFail() }
        let command = try phone.command(.unlock, now: phoneNow)
        XCTAssertEqual(command.hexString, expected["Command"])
        let request = try XCTUnwrap(car.receive(command, from: link, now: carNow).performs.first)
        let response = try XCTUnwrap(car.complete(request.token, result: nil, vehicleState: KAT.vehicleStateAfterUnlock, now: carNow).sent.first)
        XCTAssertEqual(response.hexString, expected["Response"])
        guard case .response(let body) = try phone.receive(response, now: phoneNow) else { return XCTFail() }
        XCTAssertTrue(body.isOK)
    }

    /// docs/protocol.md shows the same bytes (hex split over 64-character lines).
    func testDocumentShowsTheSameValues() throws {
        let doc = try XCTUnwrap(readRepositoryFile("docs/protocol.md"), "docs/protocol.md missing")
        let blocks = DocumentHexBlocks.blocks(in: doc)
        for (name, hex) in KAT.expected {
            XCTAssertTrue(blocks.contains(hex), "docs/protocol.md lacks \(name)")
        }
        XCTAssertTrue(blocks.contains(KAT.carSignatureRaw.hexString))
        XCTAssertTrue(blocks.contains(KAT.phoneSignatureDER.hexString))
    }

    /// Prints a fresh example (new random signatures) in the doc's and this file's formats.
    func testPrintFreshExample() throws {
        guard getenv("OCK_PRINT_KAT") != nil else { return }
        let signatureInput = try KAT.values(carSignature: Bytes(repeating: 0, count: 64), phoneSignature: Bytes(repeating: 0, count: 64))
        let input = try XCTUnwrap(signatureInput.first { $0.0 == "car signature input" }?.1)
        let signed = try XCTUnwrap(signatureInput.first { $0.0 == "AuthResponse signed data" }?.1)
        let carSignature = try KAT.carIdentity.signature(for: input).rawRepresentation
        var phoneSignature = try KAT.phoneLongTerm.signature(for: signed).derRepresentation
        while phoneSignature.count == 64 { phoneSignature = try KAT.phoneLongTerm.signature(for: signed).derRepresentation }
        print("KAT-CAR-SIGNATURE \(carSignature.hexString)")
        print("KAT-PHONE-SIGNATURE \(phoneSignature.hexString)")
        for (name, bytes) in try KAT.values(carSignature: carSignature, phoneSignature: phoneSignature) {
            print("KAT-VALUE\t\(name)\t\(bytes.count)\t\(bytes.hexString)")
        }
    }
}

// The pairing example of docs/protocol.md section 18.6, reproduced byte for byte: a whole
// SPAKE2+ pairing exchange (version 2) with a fixed code, fixed random draws and fixed keys.
// The two ECDSA signatures are given (ECDSA is randomized): they are verified, then used.
//
// To regenerate after an intentional format change:
//   OCK_PRINT_PAIRING_KAT=1 swift test --skip-build --filter PairingKnownAnswerTests/testPrintFreshExample
import XCTest
#if canImport(Glibc)
import Glibc
#endif
@testable import Protocol

enum PairingKAT {
    static let phone = KAT.phoneLongTerm
    static let carIdentity = KAT.carIdentity
    static let vehicleID = KAT.vehicleID
    /// The car's draws, in order: two for the code (the first rejected), the window ID, the
    /// challenge, y (40 bytes, reduced modulo n). The phone's one draw: x.
    static let codeDraws = [Bytes(testHex: "ffffffff"), Bytes(testHex: "0a3b5c7d")]
    static let windowID = Array(KAT.scalar("OCK1 KAT pairing window").prefix(16))
    static let challenge = KAT.scalar("OCK1 KAT pairing challenge")
    static let yDraw = Bytes(repeating: 0, count: 8) + KAT.scalar("OCK1 KAT pairing y")
    static let xDraw = Bytes(repeating: 0, count: 8) + KAT.scalar("OCK1 KAT pairing x")
    static var carDraws: [Bytes] { codeDraws + [windowID, challenge, yDraw] }

    static let carSignature = Bytes(testHex: "824f79957ac5717338bcdf8fecc0b48e338325d452b9c0a45c4e0faef73a4ab99ccca5d71084ed81cc348bfc66b75c774e5918d4f380244c66fbabb48b69883a")
    static let phoneSignature = Bytes(testHex: "03d641202854f3b17fd5c68fa15b7912c0990087ee6509ffd7d503e05e307803061aa2ca905bdb375be20b9ade15a6845fe9ff8845a81d825e3fe36029ec6aa0")

    static func values(carSignature: Bytes = carSignature, phoneSignature: Bytes = phoneSignature) throws -> [(String, Bytes)] {
        var out: [(String, Bytes)] = []
        let code = try PairingCode.generate(ScriptedRandom(codeDraws))
        out.append(("pairing code (ASCII)", code.digits))
        let (w0, w1) = try PairingSPAKE.scalars(code: code)
        let l = try SPAKE2Plus.registrationRecord(w1: w1)
        out.append(("w0", w0))
        out.append(("w1", w1))
        out.append(("L", l))
        out.append(("windowID", windowID))
        let x = try SPAKE2Plus.randomScalar(ScriptedRandom([xDraw]))
        let y = try SPAKE2Plus.randomScalar(ScriptedRandom([yDraw]))
        out.append(("x", x))
        out.append(("y", y))
        let phoneKey = phone.publicKey.sec1, car = carIdentity.publicKey.sec1
        let shareP = try SPAKE2Plus.proverShare(x: x, w0: w0)
        let hello = try PairingHelloMessage(phonePublicKey: phoneKey, shareP: shareP).encoded()
        out.append(("PairingHello", hello))
        let ids = PairingSPAKE.identities(phone: phoneKey, car: car, vehicleID: vehicleID, windowID: windowID)
        out.append(("Context", ids.context))
        let shareV = try SPAKE2Plus.verifierShare(y: y, w0: w0)
        let schedule = try SPAKE2Plus.verifierFinish(y: y, w0: w0, l: l, shareP: shareP, shareV: shareV, identities: ids)
        out.append(("shareV", shareV))
        out.append(("TT", schedule.transcript))
        out.append(("K_main", schedule.kMain))
        out.append(("K_confirmP", schedule.kConfirmP))
        out.append(("K_confirmV", schedule.kConfirmV))
        out.append(("K_shared", schedule.kShared))
        out.append(("confirmV", schedule.confirmV))
        out.append(("confirmP", schedule.confirmP))
        let body = PairingChallengeMessage.body(challenge: challenge, windowID: windowID, carIdentityPublicKey: car,
                                                vehicleID: vehicleID, shareV: shareV, confirmV: schedule.confirmV)
        out.append(("PairingChallenge body", body))
        out.append(("pairing car signature input", PairingChallengeMessage.signatureInput(pairingHello: hello, body: body)))
        out.append(("pairing car signature", carSignature))
        let challengeMessage = body + carSignature
        out.append(("PairingChallenge", challengeMessage))
        out.append(("possession signature input", PairingSPAKE.possessionInput(pairingHello: hello, pairingChallenge: challengeMessage,
                                                                               confirmP: schedule.confirmP)))
        out.append(("possession signature", phoneSignature))
        out.append(("PairingProof", try PairingProofMessage(confirmP: schedule.confirmP, signature: phoneSignature).encoded()))
        let carMAC = PairingSPAKE.resultMAC(kShared: schedule.kShared, phone: phoneKey, car: car, challenge: challenge)
        out.append(("car MAC", carMAC))
        out.append(("PairingResult", try PairingResultMessage.success(carMAC: carMAC).encoded()))
        return out
    }

    /// The documented values (docs/protocol.md section 18.6).
    static let expected: [(String, String)] = [
        ("pairing code (ASCII)", "363632343631"),
        ("w0", "f3c40568daf069b0a7db81f83106e513231814ca79ec401d3c3169f927d43aa2"),
        ("w1", "c72509d269b45c43c621c2607143e092e627176c71b5bfe15b29bc5803a9646c"),
        ("L",
            "0464b4c9a0c96d134c448ed1df70b13486c0e08d79d323cce4ba0cbdb669bb7c53017b7dcb48d2d36a15342f37d10378"
            + "385d4e2236c7b8bc84a11545221236a357"),
        ("windowID", "1c86382ceee3916e6c5547307b67a036"),
        ("x", "a14318205b2cd7d3c9ee737116be0802ac87433f9b71cc54dfb92974fa824e5b"),
        ("y", "fdfeb6be96aa8ccf584608d5b1ce3109094e2494dc3d84cd3d4f1cfcf3656686"),
        ("PairingHello",
            "200204b9c9c2481b3cf9abd309233c583dd8bc3f992324bdf85262f85f83e69723ef94545cde523a9484b2e504f03280"
            + "b9103b5b2f3625b7317dc6187c62259ae106c1047a9bc5a07a94f9b965c2a210ac97089ad352e1407d27a3ef7542db05"
            + "57db163ce915caa3bb7d84246ab6cfcbf9d1bf60bdc09c52e08514ecb5602284b9c03091"),
        ("Context",
            "4f434b312d504149522d5350414b4532502d5632114f434b2d4b41542d56454849434c452d311c86382ceee3916e6c55"
            + "47307b67a036"),
        ("shareV",
            "0494868db589890eaf7ae4cb8663094528ae31f1c7b5e495051533b68d57c6d44e5266e4de98ef99a9b57bc8396b3856"
            + "f0473ebf06dfe65663714de8e444d1b040"),
        ("TT",
            "36000000000000004f434b312d504149522d5350414b4532502d5632114f434b2d4b41542d56454849434c452d311c86"
            + "382ceee3916e6c5547307b67a036410000000000000004b9c9c2481b3cf9abd309233c583dd8bc3f992324bdf85262f8"
            + "5f83e69723ef94545cde523a9484b2e504f03280b9103b5b2f3625b7317dc6187c62259ae106c1410000000000000004"
            + "56b2d7a739c9022a0bcd10df250545b72dd8910f9fed22091039fb03f1d6dd6b19c384a030ade08abd30626bda3a35ba"
            + "3e1cd69a68f3f770ef38eb9840dd5744410000000000000004886e2f97ace46e55ba9dd7242579f2993b64e16ef3dcab"
            + "95afd497333d8fa12f5ff355163e43ce224e0b0e65ff02ac8e5c7be09419c785e0ca547d55a12e2d2041000000000000"
            + "0004d8bbd6c639c62937b04d997f38c3770719c629d7014d49a24b4f98baa1292b4907d60aa6bfade45008a636337f51"
            + "68c64d9bd36034808cd564490b1e656edbe74100000000000000047a9bc5a07a94f9b965c2a210ac97089ad352e1407d"
            + "27a3ef7542db0557db163ce915caa3bb7d84246ab6cfcbf9d1bf60bdc09c52e08514ecb5602284b9c030914100000000"
            + "0000000494868db589890eaf7ae4cb8663094528ae31f1c7b5e495051533b68d57c6d44e5266e4de98ef99a9b57bc839"
            + "6b3856f0473ebf06dfe65663714de8e444d1b0404100000000000000046129d910c2350e558b02ffc2c60fa73714588d"
            + "d8896f06b71d09a40ee6c84ac7f561c9218f21cce76ad1cf14650e622858a298024dc23c1499f6547288c5dc18410000"
            + "0000000000041d53f19e9796478c4c6fe790409734efc496063bd7fdfd3d253947fdc30b455a176173ffe51def43f402"
            + "2ca66d0f6cf6fd865f3604d7d47cca94ffbbd7204cc62000000000000000f3c40568daf069b0a7db81f83106e5132318"
            + "14ca79ec401d3c3169f927d43aa2"),
        ("K_main", "dee1126462ca74b4feaecaf44375e4d251a82a0ec28b704e20bd224015070979"),
        ("K_confirmP", "84017b246ba0223f112d6ae236e198334d1c5d2dbcdf32ba0531862266f76b99"),
        ("K_confirmV", "3429a523b81220aacb943590ed60f410ddda4d1ea6eb8f82efe5d8831013df61"),
        ("K_shared", "bf98afac756d17f4708dae3404551b8aef5994fa004ed55ad8d5be52679b5dc6"),
        ("confirmV", "bc5a84917b0a1dbc3beb69d229972a1c3dcd43b882b0100c429fe711a7658b03"),
        ("confirmP", "fd595db2a7d95c63682bd94277bbf36b6957594f761c45c452e68957d3d876b8"),
        ("PairingChallenge body",
            "2102636a7a908267aa556824b978f29a7fac85c4a22b13b65a5db5ceff8b3d625e441c86382ceee3916e6c5547307b67"
            + "a0360456b2d7a739c9022a0bcd10df250545b72dd8910f9fed22091039fb03f1d6dd6b19c384a030ade08abd30626bda"
            + "3a35ba3e1cd69a68f3f770ef38eb9840dd5744114f434b2d4b41542d56454849434c452d310494868db589890eaf7ae4"
            + "cb8663094528ae31f1c7b5e495051533b68d57c6d44e5266e4de98ef99a9b57bc8396b3856f0473ebf06dfe65663714d"
            + "e8e444d1b040bc5a84917b0a1dbc3beb69d229972a1c3dcd43b882b0100c429fe711a7658b03"),
        ("pairing car signature input",
            "4f434b312d504149522d4348414c4c454e4745200204b9c9c2481b3cf9abd309233c583dd8bc3f992324bdf85262f85f"
            + "83e69723ef94545cde523a9484b2e504f03280b9103b5b2f3625b7317dc6187c62259ae106c1047a9bc5a07a94f9b965"
            + "c2a210ac97089ad352e1407d27a3ef7542db0557db163ce915caa3bb7d84246ab6cfcbf9d1bf60bdc09c52e08514ecb5"
            + "602284b9c030912102636a7a908267aa556824b978f29a7fac85c4a22b13b65a5db5ceff8b3d625e441c86382ceee391"
            + "6e6c5547307b67a0360456b2d7a739c9022a0bcd10df250545b72dd8910f9fed22091039fb03f1d6dd6b19c384a030ad"
            + "e08abd30626bda3a35ba3e1cd69a68f3f770ef38eb9840dd5744114f434b2d4b41542d56454849434c452d310494868d"
            + "b589890eaf7ae4cb8663094528ae31f1c7b5e495051533b68d57c6d44e5266e4de98ef99a9b57bc8396b3856f0473ebf"
            + "06dfe65663714de8e444d1b040bc5a84917b0a1dbc3beb69d229972a1c3dcd43b882b0100c429fe711a7658b03"),
        ("pairing car signature",
            "824f79957ac5717338bcdf8fecc0b48e338325d452b9c0a45c4e0faef73a4ab99ccca5d71084ed81cc348bfc66b75c77"
            + "4e5918d4f380244c66fbabb48b69883a"),
        ("PairingChallenge",
            "2102636a7a908267aa556824b978f29a7fac85c4a22b13b65a5db5ceff8b3d625e441c86382ceee3916e6c5547307b67"
            + "a0360456b2d7a739c9022a0bcd10df250545b72dd8910f9fed22091039fb03f1d6dd6b19c384a030ade08abd30626bda"
            + "3a35ba3e1cd69a68f3f770ef38eb9840dd5744114f434b2d4b41542d56454849434c452d310494868db589890eaf7ae4"
            + "cb8663094528ae31f1c7b5e495051533b68d57c6d44e5266e4de98ef99a9b57bc8396b3856f0473ebf06dfe65663714d"
            + "e8e444d1b040bc5a84917b0a1dbc3beb69d229972a1c3dcd43b882b0100c429fe711a7658b03824f79957ac5717338bc"
            + "df8fecc0b48e338325d452b9c0a45c4e0faef73a4ab99ccca5d71084ed81cc348bfc66b75c774e5918d4f380244c66fb"
            + "abb48b69883a"),
        ("possession signature input",
            "4f434b312d504149522d50524f4f46200204b9c9c2481b3cf9abd309233c583dd8bc3f992324bdf85262f85f83e69723"
            + "ef94545cde523a9484b2e504f03280b9103b5b2f3625b7317dc6187c62259ae106c1047a9bc5a07a94f9b965c2a210ac"
            + "97089ad352e1407d27a3ef7542db0557db163ce915caa3bb7d84246ab6cfcbf9d1bf60bdc09c52e08514ecb5602284b9"
            + "c030912102636a7a908267aa556824b978f29a7fac85c4a22b13b65a5db5ceff8b3d625e441c86382ceee3916e6c5547"
            + "307b67a0360456b2d7a739c9022a0bcd10df250545b72dd8910f9fed22091039fb03f1d6dd6b19c384a030ade08abd30"
            + "626bda3a35ba3e1cd69a68f3f770ef38eb9840dd5744114f434b2d4b41542d56454849434c452d310494868db589890e"
            + "af7ae4cb8663094528ae31f1c7b5e495051533b68d57c6d44e5266e4de98ef99a9b57bc8396b3856f0473ebf06dfe656"
            + "63714de8e444d1b040bc5a84917b0a1dbc3beb69d229972a1c3dcd43b882b0100c429fe711a7658b03824f79957ac571"
            + "7338bcdf8fecc0b48e338325d452b9c0a45c4e0faef73a4ab99ccca5d71084ed81cc348bfc66b75c774e5918d4f38024"
            + "4c66fbabb48b69883afd595db2a7d95c63682bd94277bbf36b6957594f761c45c452e68957d3d876b8"),
        ("possession signature",
            "03d641202854f3b17fd5c68fa15b7912c0990087ee6509ffd7d503e05e307803061aa2ca905bdb375be20b9ade15a684"
            + "5fe9ff8845a81d825e3fe36029ec6aa0"),
        ("PairingProof",
            "2202fd595db2a7d95c63682bd94277bbf36b6957594f761c45c452e68957d3d876b803d641202854f3b17fd5c68fa15b"
            + "7912c0990087ee6509ffd7d503e05e307803061aa2ca905bdb375be20b9ade15a6845fe9ff8845a81d825e3fe36029ec"
            + "6aa0"),
        ("car MAC", "19cd8ad2f7fef57be692b6a1cc77d42e263d7d166a5d4697ec34021b571c1a23"),
        ("PairingResult", "2302000019cd8ad2f7fef57be692b6a1cc77d42e263d7d166a5d4697ec34021b571c1a23"),
    ]
}

final class PairingKnownAnswerTests: XCTestCase {
    func expected(_ name: String) throws -> Bytes {
        Bytes(testHex: try XCTUnwrap(PairingKAT.expected.first { $0.0 == name }?.1, name))
    }

    func testGivenSignaturesVerify() throws {
        for (key, input, signature) in [(PairingKAT.carIdentity, "pairing car signature input", PairingKAT.carSignature),
                                        (PairingKAT.phone, "possession signature input", PairingKAT.phoneSignature)] {
            XCTAssertTrue(key.publicKey.isValidSignature(try ECDSASignature(rawRepresentation: signature), for: try expected(input)), input)
        }
    }

    func testEveryValueFromTheFormulas() throws {
        let computed = try PairingKAT.values()
        XCTAssertEqual(computed.map(\.0), PairingKAT.expected.map(\.0))
        for ((name, bytes), (_, hex)) in zip(computed, PairingKAT.expected) {
            XCTAssertEqual(bytes.hexString, hex, name)
        }
        XCTAssertEqual(try PairingCode.generate(ScriptedRandom(PairingKAT.codeDraws)).text, "662461")
    }

    /// The car engine and PhonePairingSession, with the fixed draws, send exactly these bytes.
    func testTheEnginesProduceThePairingBytes() throws {
        let carSigner = PinnedSigner(key: PairingKAT.carIdentity, message: try expected("pairing car signature input"),
                                     fixed: try ECDSASignature(rawRepresentation: PairingKAT.carSignature))
        let phoneSigner = PinnedSigner(key: PairingKAT.phone, message: try expected("possession signature input"),
                                       fixed: try ECDSASignature(rawRepresentation: PairingKAT.phoneSignature))
        let keychain = SharedKeychain(Keychain())
        var car = CarProtocolEngine(configuration: CarProtocolConfiguration(vehicleID: PairingKAT.vehicleID), identity: carSigner,
                                    keys: keychain, certificateVerifier: keychain, random: ScriptedRandom(PairingKAT.carDraws))
        let now = ProtocolTime(monotonicMillis: 1_000, wallSeconds: 1_767_225_600, wallClockTrusted: false)
        let (code, _) = try car.openPairingWindow(now: now)
        XCTAssertEqual(code.digits, try expected("pairing code (ASCII)"))
        var phone = PhonePairingSession(longTermKey: phoneSigner, code: code, expectedVehicleID: PairingKAT.vehicleID,
                                        random: ScriptedRandom([PairingKAT.xDraw]))
        let link = LinkID(1)

        let hello = try phone.start()
        XCTAssertEqual(hello.hexString, try expected("PairingHello").hexString)
        let challenge = try XCTUnwrap(car.receive(hello, from: link, now: now).sent.first)
        XCTAssertEqual(challenge.hexString, try expected("PairingChallenge").hexString)
        guard case .send(let proof) = try phone.receive(challenge) else { return XCTFail("no proof") }
        XCTAssertEqual(proof.hexString, try expected("PairingProof").hexString)
        let enroll = try XCTUnwrap(car.receive(proof, from: link, now: now).enrollments.first)
        _ = try keychain.update { (k: inout Keychain) throws(FaultCode) in try k.enroll(enroll, now: now) }
        let result = try XCTUnwrap(car.completeEnrollment(enroll.token, result: nil, now: now).sent.first)
        XCTAssertEqual(result.hexString, try expected("PairingResult").hexString)
        XCTAssertEqual(try phone.receive(result), .paired(.init(carIdentityKey: PairingKAT.carIdentity.publicKey, vehicleID: PairingKAT.vehicleID)))
    }

    /// docs/protocol.md shows the same bytes (hex split over 64-character lines).
    func testDocumentShowsTheSameValues() throws {
        let doc = try XCTUnwrap(readRepositoryFile("docs/protocol.md"), "docs/protocol.md missing")
        let blocks = DocumentHexBlocks.blocks(in: doc)
        for (name, hex) in PairingKAT.expected {
            XCTAssertTrue(blocks.contains(hex), "docs/protocol.md lacks \(name)")
        }
    }

    func testPrintFreshExample() throws {
        guard getenv("OCK_PRINT_PAIRING_KAT") != nil else { return }
        let draft = Dictionary(uniqueKeysWithValues: try PairingKAT.values())
        func sign(_ key: P256PrivateKey, _ name: String) throws -> Bytes {
            try key.signature(for: XCTUnwrap(draft[name])).rawRepresentation
        }
        // The car signature covers the hello only; the phone's covers the signed challenge.
        let carSignature = try sign(PairingKAT.carIdentity, "pairing car signature input")
        let withCar = Dictionary(uniqueKeysWithValues: try PairingKAT.values(carSignature: carSignature))
        let phoneSignature = try PairingKAT.phone.signature(for: XCTUnwrap(withCar["possession signature input"])).rawRepresentation
        for (name, bytes) in try PairingKAT.values(carSignature: carSignature, phoneSignature: phoneSignature) {
            print("PAIRINGKAT|\(name)|\(bytes.count)|\(bytes.hexString)")
        }
    }
}

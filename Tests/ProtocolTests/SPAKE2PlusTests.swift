// SPAKE2+ against RFC 9383 Appendix C (test vectors of SPAKE2+-P256-SHA256-HKDF-SHA256-
// HMAC-SHA256: Context "SPAKE2+-P256-SHA256-HKDF-SHA256-HMAC-SHA256 Test Vectors", idProver
// "client", idVerifier "server"), then the refusals.
import XCTest
@testable import Protocol

final class SPAKE2PlusTests: XCTestCase {
    enum RFC9383 {
        static let ids = SPAKE2Plus.Identities(context: Array("SPAKE2+-P256-SHA256-HKDF-SHA256-HMAC-SHA256 Test Vectors".utf8),
                                               idProver: Array("client".utf8), idVerifier: Array("server".utf8))
        static let w0 = Bytes(testHex: "bb8e1bbcf3c48f62c08db243652ae55d3e5586053fca77102994f23ad95491b3")
        static let w1 = Bytes(testHex: "7e945f34d78785b8a3ef44d0df5a1a97d6b3b460409a345ca7830387a74b1dba")
        static let l = Bytes(testHex: "04eb7c9db3d9a9eb1f8adab81b5794c1f13ae3e225efbe91ea487425854c7fc00f00bfedcbd09b2400142d40a14f2064ef31dfaa903b91d1faea7093d835966efd")
        static let x = Bytes(testHex: "d1232c8e8693d02368976c174e2088851b8365d0d79a9eee709c6a05a2fad539")
        static let shareP = Bytes(testHex: "04ef3bd051bf78a2234ec0df197f7828060fe9856503579bb1733009042c15c0c1de127727f418b5966afadfdd95a6e4591d171056b333dab97a79c7193e341727")
        static let y = Bytes(testHex: "717a72348a182085109c8d3917d6c43d59b224dc6a7fc4f0483232fa6516d8b3")
        static let shareV = Bytes(testHex: "04c0f65da0d11927bdf5d560c69e1d7d939a05b0e88291887d679fcadea75810fb5cc1ca7494db39e82ff2f50665255d76173e09986ab46742c798a9a68437b048")
        static let z = Bytes(testHex: "04bbfce7dd7f277819c8da21544afb7964705569bdf12fb92aa388059408d50091a0c5f1d3127f56813b5337f9e4e67e2ca633117a4fbd559946ab474356c41839")
        static let v = Bytes(testHex: "0458bf27c6bca011c9ce1930e8984a797a3419797b936629a5a937cf2f11c8b9514b82b993da8a46e664f23db7c01edc87faa530db01c2ee405230b18997f16b68")
        static let tt = Bytes(testHex: "38000000000000005350414b45322b2d503235362d5348413235362d484b44462d5348413235362d484d41432d534841323536205465737420566563746f72730600000000000000636c69656e740600000000000000736572766572410000000000000004886e2f97ace46e55ba9dd7242579f2993b64e16ef3dcab95afd497333d8fa12f5ff355163e43ce224e0b0e65ff02ac8e5c7be09419c785e0ca547d55a12e2d20410000000000000004d8bbd6c639c62937b04d997f38c3770719c629d7014d49a24b4f98baa1292b4907d60aa6bfade45008a636337f5168c64d9bd36034808cd564490b1e656edbe7410000000000000004ef3bd051bf78a2234ec0df197f7828060fe9856503579bb1733009042c15c0c1de127727f418b5966afadfdd95a6e4591d171056b333dab97a79c7193e341727410000000000000004c0f65da0d11927bdf5d560c69e1d7d939a05b0e88291887d679fcadea75810fb5cc1ca7494db39e82ff2f50665255d76173e09986ab46742c798a9a68437b048410000000000000004bbfce7dd7f277819c8da21544afb7964705569bdf12fb92aa388059408d50091a0c5f1d3127f56813b5337f9e4e67e2ca633117a4fbd559946ab474356c4183941000000000000000458bf27c6bca011c9ce1930e8984a797a3419797b936629a5a937cf2f11c8b9514b82b993da8a46e664f23db7c01edc87faa530db01c2ee405230b18997f16b682000000000000000bb8e1bbcf3c48f62c08db243652ae55d3e5586053fca77102994f23ad95491b3")
        static let kMain = Bytes(testHex: "4c59e1ccf2cfb961aa31bd9434478a1089b56cd11542f53d3576fb6c2a438a29")
        static let kConfirmP = Bytes(testHex: "871ae3f7b78445e34438fb284504240239031c39d80ac23eb5ab9be5ad6db58a")
        static let kConfirmV = Bytes(testHex: "ccd53c7c1fa37b64a462b40db8be101cedcf838950162902054e644b400f1680")
        static let confirmP = Bytes(testHex: "926cc713504b9b4d76c9162ded04b5493e89109f6d89462cd33adc46fda27527")
        static let confirmV = Bytes(testHex: "9747bcc4f8fe9f63defee53ac9b07876d907d55047e6ff2def2e7529089d3e68")
        static let kShared = Bytes(testHex: "0c5f8ccd1413423a54f6c1fb26ff01534a87f893779c6e68666d772bfd91f3e7")
    }

    func assertVector(_ schedule: SPAKE2Plus.KeySchedule, file: StaticString = #filePath, line: UInt = #line) {
        XCTAssertEqual(schedule.z.hexString, RFC9383.z.hexString, "Z", file: file, line: line)
        XCTAssertEqual(schedule.v.hexString, RFC9383.v.hexString, "V", file: file, line: line)
        XCTAssertEqual(schedule.transcript.hexString, RFC9383.tt.hexString, "TT", file: file, line: line)
        XCTAssertEqual(schedule.kMain.hexString, RFC9383.kMain.hexString, "K_main", file: file, line: line)
        XCTAssertEqual(schedule.kConfirmP.hexString, RFC9383.kConfirmP.hexString, "K_confirmP", file: file, line: line)
        XCTAssertEqual(schedule.kConfirmV.hexString, RFC9383.kConfirmV.hexString, "K_confirmV", file: file, line: line)
        XCTAssertEqual(schedule.confirmP.hexString, RFC9383.confirmP.hexString, "confirmP", file: file, line: line)
        XCTAssertEqual(schedule.confirmV.hexString, RFC9383.confirmV.hexString, "confirmV", file: file, line: line)
        XCTAssertEqual(schedule.kShared.hexString, RFC9383.kShared.hexString, "K_shared", file: file, line: line)
    }

    func testRFC9383RegistrationRecord() throws {
        XCTAssertEqual(try SPAKE2Plus.registrationRecord(w1: RFC9383.w1).hexString, RFC9383.l.hexString, "L = w1*P")
        // The PBKDF reduction: w0s, w1s padded to 40 bytes reduce to themselves.
        let output = Bytes(repeating: 0, count: 8) + RFC9383.w0 + Bytes(repeating: 0, count: 8) + RFC9383.w1
        let scalars = try SPAKE2Plus.scalars(fromPBKDFOutput: output)
        XCTAssertEqual(scalars.w0, RFC9383.w0)
        XCTAssertEqual(scalars.w1, RFC9383.w1)
    }

    func testRFC9383Shares() throws {
        XCTAssertEqual(try SPAKE2Plus.proverShare(x: RFC9383.x, w0: RFC9383.w0).hexString, RFC9383.shareP.hexString, "X")
        XCTAssertEqual(try SPAKE2Plus.verifierShare(y: RFC9383.y, w0: RFC9383.w0).hexString, RFC9383.shareV.hexString, "Y")
    }

    func testRFC9383ProverKeySchedule() throws {
        assertVector(try SPAKE2Plus.proverFinish(x: RFC9383.x, w0: RFC9383.w0, w1: RFC9383.w1, shareP: RFC9383.shareP,
                                                 shareV: RFC9383.shareV, identities: RFC9383.ids))
    }

    func testRFC9383VerifierKeySchedule() throws {
        assertVector(try SPAKE2Plus.verifierFinish(y: RFC9383.y, w0: RFC9383.w0, l: RFC9383.l, shareP: RFC9383.shareP,
                                                   shareV: RFC9383.shareV, identities: RFC9383.ids))
    }

    func testMAndNAreTheRFCPoints() throws {
        // RFC 9383 section 4 prints M and N compressed; ours are the same points uncompressed.
        XCTAssertEqual(Array(SPAKE2Plus.m[1...32]).hexString, "886e2f97ace46e55ba9dd7242579f2993b64e16ef3dcab95afd497333d8fa12f")
        XCTAssertEqual(Array(SPAKE2Plus.n[1...32]).hexString, "d8bbd6c639c62937b04d997f38c3770719c629d7014d49a24b4f98baa1292b49")
        XCTAssertNoThrow(try P256Point.decode(SPAKE2Plus.m))
        XCTAssertNoThrow(try P256Point.decode(SPAKE2Plus.n))
    }

    func testAWrongConfirmationIsRefused() throws {
        let schedule = try SPAKE2Plus.verifierFinish(y: RFC9383.y, w0: RFC9383.w0, l: RFC9383.l, shareP: RFC9383.shareP,
                                                     shareV: RFC9383.shareV, identities: RFC9383.ids)
        XCTAssertTrue(SPAKE2Plus.isValidConfirmation(RFC9383.confirmP, expected: schedule.confirmP))
        for index in [0, 15, 31] {
            var forged = RFC9383.confirmP
            forged[index] ^= 0x01
            XCTAssertFalse(SPAKE2Plus.isValidConfirmation(forged, expected: schedule.confirmP), "bit flipped at \(index)")
        }
        XCTAssertFalse(SPAKE2Plus.isValidConfirmation(Array(RFC9383.confirmP.prefix(31)), expected: schedule.confirmP))
        XCTAssertFalse(SPAKE2Plus.isValidConfirmation([], expected: schedule.confirmP))
    }

    func testInvalidSharesAreRefused() throws {
        var offCurve = RFC9383.shareP
        offCurve[64] ^= 0x01
        let identityLike = [0x04] + Bytes(repeating: 0, count: 64)
        let compressed = [0x02] + RFC9383.shareP[1...32]
        for bad in [offCurve, identityLike, Array(compressed), [0x00], []] {
            XCTAssertThrowsError(try SPAKE2Plus.verifierFinish(y: RFC9383.y, w0: RFC9383.w0, l: RFC9383.l, shareP: bad,
                                                               shareV: RFC9383.shareV, identities: RFC9383.ids), "\(bad.hexString)")
            XCTAssertThrowsError(try SPAKE2Plus.proverFinish(x: RFC9383.x, w0: RFC9383.w0, w1: RFC9383.w1, shareP: RFC9383.shareP,
                                                             shareV: bad, identities: RFC9383.ids), "\(bad.hexString)")
        }
        // A shareP equal to w0*M unmasks to the identity: Z would be the identity for every y.
        let mask = try P256Point.decode(SPAKE2Plus.m).times(P256Scalar.exact(RFC9383.w0)).encoded()
        XCTAssertThrowsError(try SPAKE2Plus.verifierFinish(y: RFC9383.y, w0: RFC9383.w0, l: RFC9383.l, shareP: mask,
                                                           shareV: RFC9383.shareV, identities: RFC9383.ids))
        // Scalars out of range.
        XCTAssertThrowsError(try SPAKE2Plus.proverShare(x: Bytes(repeating: 0, count: 32), w0: RFC9383.w0))
        XCTAssertThrowsError(try SPAKE2Plus.proverShare(x: P256Curve.order, w0: RFC9383.w0))
    }

    func testAWrongPasswordGivesOtherKeys() throws {
        // The verifier registered the RFC's w0/L; a prover with another password (w0', w1').
        let other = try SPAKE2Plus.scalars(fromPBKDFOutput: Bytes(repeating: 0x5a, count: 80))
        let shareP = try SPAKE2Plus.proverShare(x: RFC9383.x, w0: other.w0)
        let verifier = try SPAKE2Plus.verifierFinish(y: RFC9383.y, w0: RFC9383.w0, l: RFC9383.l, shareP: shareP,
                                                     shareV: RFC9383.shareV, identities: RFC9383.ids)
        let prover = try SPAKE2Plus.proverFinish(x: RFC9383.x, w0: other.w0, w1: other.w1, shareP: shareP,
                                                 shareV: RFC9383.shareV, identities: RFC9383.ids)
        XCTAssertNotEqual(prover.kShared, verifier.kShared)
        XCTAssertFalse(SPAKE2Plus.isValidConfirmation(verifier.confirmV, expected: prover.confirmV))
        XCTAssertFalse(SPAKE2Plus.isValidConfirmation(prover.confirmP, expected: verifier.confirmP))
    }

    func testPairingCodeScalarsAreDeterministicAndDistinct() throws {
        let a = try PairingSPAKE.scalars(code: PairingCode("123456"))
        XCTAssertEqual(try PairingSPAKE.scalars(code: PairingCode("123456")).w0, a.w0)
        let b = try PairingSPAKE.scalars(code: PairingCode("123457"))
        XCTAssertNotEqual(a.w0, b.w0)
        XCTAssertNotEqual(a.w1, b.w1)
    }
}

// Power-on known-answer tests: the agent runs these before it serves any phone, so a broken
// OpenSSL build or a miscompiled binary refuses to open doors instead of opening them wrongly.

public enum CryptoSelfTest {
    public struct Result: Sendable, Equatable {
        public let name: String
        public let passed: Bool
    }

    /// Runs every check; never throws (a throwing primitive is a failed check).
    public static func run() -> [Result] {
        checks.map { name, check in Result(name: name, passed: (try? check()) ?? false) }
    }

    /// True when every check passed.
    public static var allPassed: Bool { run().allSatisfy(\.passed) }

    private static let checks: [(String, @Sendable () throws -> Bool)] = [
        ("SHA-256 (FIPS 180-2 'abc')", {
            SHA256.hash(Bytes("abc".utf8)) == Bytes(hex: "ba7816bf8f01cfea414140de5dae2223b00361a396177a9cb410ff61f20015ad")
        }),
        ("HMAC-SHA256 (RFC 4231 case 2)", {
            HMACSHA256.authenticationCode(key: Bytes("Jefe".utf8), message: Bytes("what do ya want for nothing?".utf8))
                == Bytes(hex: "5bdcc146bf60754e6a042426089575c75a003f089d2739839dec58b964ec3843")
        }),
        ("HKDF-SHA256 (RFC 5869 case 1)", {
            try HKDF.deriveKey(inputKeyMaterial: Bytes(repeating: 0x0b, count: 22),
                               salt: Bytes(hex: "000102030405060708090a0b0c")!,
                               info: Bytes(hex: "f0f1f2f3f4f5f6f7f8f9")!, outputByteCount: 42)
                == Bytes(hex: "3cb25f25faacd57a90434f64d0362f2a2d2d0a90cf1a5a4c5db02d56ecc4c5bf34007208d5b887185865")
        }),
        ("AES-256-GCM (GCM spec test case 14)", {
            let zeroKey = Bytes(repeating: 0, count: 32), zeroNonce = Bytes(repeating: 0, count: 12)
            let sealed = try AESGCM.seal(Bytes(repeating: 0, count: 16), key: zeroKey, nonce: zeroNonce)
            let reopened = try AESGCM.open(ciphertext: sealed.ciphertext, tag: sealed.tag, key: zeroKey, nonce: zeroNonce)
            var tampered = sealed.tag
            tampered[0] ^= 1
            let refused = (try? AESGCM.open(ciphertext: sealed.ciphertext, tag: tampered, key: zeroKey, nonce: zeroNonce)) == nil
            return sealed.ciphertext == Bytes(hex: "cea7403d4d606b6e074ec5d3baf39d18")
                && sealed.tag == Bytes(hex: "d0d1c8a799996bf0265b98b5d48ab919")
                && reopened == Bytes(repeating: 0, count: 16) && refused
        }),
        ("ECDSA P-256 verify (Wycheproof tc 1)", {
            let key = try P256PublicKey(sec1: Bytes(hex: "0404aaec73635726f213fb8a9e64da3b8632e41495a944d0045b522eba7240fad587d9315798aaa3a5ba01775787ced05eaaf7b4e09fc81d6d1aa546e8365d525d")!)
            let good = try ECDSASignature(derRepresentation: Bytes(hex: "3045022100b292a619339f6e567a305c951c0dcbcc42d16e47f219f9e98e76e09d8770b34a02200177e60492c5a8242f76f07bfe3661bde59ec2a17ce5bd2dab2abebdf89a62e2")!)
            return key.isValidSignature(good, for: []) && !key.isValidSignature(good, for: [0])
        }),
        ("ECDSA P-256 sign/verify pairwise", {
            let key = try P256PrivateKey.generate()
            let signature = try key.signature(for: Bytes("self-test".utf8))
            return key.publicKey.isValidSignature(signature, for: Bytes("self-test".utf8))
                && !key.publicKey.isValidSignature(signature, for: Bytes("self-tesT".utf8))
        }),
        ("ECDH P-256 (Wycheproof tc 1)", {
            let mine = try P256PrivateKey(rawScalar: Bytes(hex: "0612465c89a023ab17855b0a6bcebfd3febb53aef84138647b5352e02c10c346")!)
            let peer = try P256PublicKey(sec1: Bytes(hex: "0462d5bd3372af75fe85a040715d0f502428e07046868b0bfdfa61d731afe44f26ac333a93a9e70a81cd5a95b5bf8d13990eb741c8c38872b4a07d275a014e30cf")!)
            return try mine.sharedSecret(with: peer) == Bytes(hex: "53020d908b0219328b658b525f26780e3ae12bcd952bb25a93bc0895e1714285")
        }),
        ("P-256 point validation refuses an off-curve point", {
            var point = Bytes(hex: "0462d5bd3372af75fe85a040715d0f502428e07046868b0bfdfa61d731afe44f26ac333a93a9e70a81cd5a95b5bf8d13990eb741c8c38872b4a07d275a014e30cf")!
            point[64] ^= 1
            return (try? P256PublicKey(sec1: point)) == nil
        }),
        ("CSPRNG returns distinct blocks", {
            try SystemRandom().randomBytes(32) != SystemRandom().randomBytes(32)
        }),
    ]
}

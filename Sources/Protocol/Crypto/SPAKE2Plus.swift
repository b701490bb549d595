// SPAKE2+ (RFC 9383), ciphersuite P256-SHA256-HKDF-SHA256-HMAC-SHA256, as pure functions over
// bytes: the caller injects the random scalars, so both roles are deterministic under test.
// The group operations are OpenSSL's (P256Point.swift).

public enum SPAKE2Plus {
    public static let suiteName = "P256-SHA256-HKDF-SHA256-HMAC-SHA256"
    /// Shares, Z and V: SEC1 uncompressed points.
    public static let shareLength = 65
    /// confirmP, confirmV: HMAC-SHA256.
    public static let confirmationLength = 32
    /// Each half of the PBKDF output (w0s, w1s): ceil(log2(n)) + 64 bits = 40 bytes, so the
    /// reduction modulo n is biased by at most 2^-64 (RFC 9383 section 3.2).
    public static let pbkdfHalfLength = 40

    /// M and N for P-256 (RFC 9383 section 4), uncompressed: nobody knows their discrete logs.
    public static let m = Bytes(hex: "04886e2f97ace46e55ba9dd7242579f2993b64e16ef3dcab95afd497333d8fa12f"
        + "5ff355163e43ce224e0b0e65ff02ac8e5c7be09419c785e0ca547d55a12e2d20")!
    public static let n = Bytes(hex: "04d8bbd6c639c62937b04d997f38c3770719c629d7014d49a24b4f98baa1292b49"
        + "07d60aa6bfade45008a636337f5168c64d9bd36034808cd564490b1e656edbe7")!

    static let confirmationKeysInfo = Array("ConfirmationKeys".utf8)
    static let sharedKeyInfo = Array("SharedKey".utf8)

    /// The Context string and the two identities every transcript starts with.
    public struct Identities: Sendable, Equatable {
        public let context: Bytes
        public let idProver: Bytes
        public let idVerifier: Bytes

        public init(context: Bytes, idProver: Bytes, idVerifier: Bytes) {
            self.context = context
            self.idProver = idProver
            self.idVerifier = idVerifier
        }
    }

    /// What one run derives (section 3.4): keep `kShared`, send one confirmation, check the other.
    public struct KeySchedule: Sendable {
        public let transcript: Bytes
        public let kMain: Bytes
        public let kConfirmP: Bytes
        public let kConfirmV: Bytes
        public let kShared: Bytes
        /// confirmP = MAC(K_confirmP, shareV): the prover's.
        public let confirmP: Bytes
        /// confirmV = MAC(K_confirmV, shareP): the verifier's.
        public let confirmV: Bytes
        /// Z and V (encoded), for the test vectors only.
        let z: Bytes
        let v: Bytes
    }

    /// w0 || w1 (32 bytes each, big-endian) from 80 bytes of PBKDF output w0s || w1s:
    /// w0 = w0s mod n, w1 = w1s mod n. A zero scalar is refused.
    public static func scalars(fromPBKDFOutput output: Bytes) throws(CryptoError) -> (w0: Bytes, w1: Bytes) {
        guard output.count == 2 * pbkdfHalfLength else {
            throw .invalidLength(field: "PBKDF output", expected: 2 * pbkdfHalfLength, actual: output.count)
        }
        let w0 = try P256Scalar.reducing(Array(output[..<pbkdfHalfLength])).bytes
        let w1 = try P256Scalar.reducing(Array(output[pbkdfHalfLength...])).bytes
        return (w0, w1)
    }

    /// L = w1*P, the verifier's half of the registration record (it keeps w0 and L).
    public static func registrationRecord(w1: Bytes) throws(CryptoError) -> Bytes {
        try P256Point.generator(times: P256Scalar.exact(w1)).encoded()
    }

    /// A uniformly random scalar in 1..<n for x or y: 40 random bytes reduced modulo n.
    public static func randomScalar(_ random: any RandomSource) throws -> Bytes {
        let draw = try random.randomBytes(pbkdfHalfLength)
        guard draw.count == pbkdfHalfLength else {
            throw CryptoError.invalidLength(field: "random draw", expected: pbkdfHalfLength, actual: draw.count)
        }
        return try P256Scalar.reducing(draw).bytes
    }

    // MARK: - Prover

    /// shareP = X = x*P + w0*M.
    public static func proverShare(x: Bytes, w0: Bytes) throws(CryptoError) -> Bytes {
        let mask = try P256Point.decode(m).times(P256Scalar.exact(w0))
        return try P256Point.generator(times: P256Scalar.exact(x)).adding(mask).checked().encoded()
    }

    /// The prover's keys once shareV arrived: Z = x*(Y - w0*N), V = w1*(Y - w0*N). A shareV
    /// that is not a point on the curve, is the identity, or cancels the mask is refused.
    public static func proverFinish(x: Bytes, w0: Bytes, w1: Bytes, shareP: Bytes, shareV: Bytes,
                                    identities: Identities) throws(CryptoError) -> KeySchedule {
        let scalarW0 = try P256Scalar.exact(w0)
        let unmasked = try P256Point.decode(shareV).adding(P256Point.decode(n).times(scalarW0).negated()).checked()
        let z = try unmasked.times(P256Scalar.exact(x)).checked().encoded()
        let v = try unmasked.times(P256Scalar.exact(w1)).checked().encoded()
        return try schedule(identities: identities, shareP: shareP, shareV: shareV, z: z, v: v, w0: w0)
    }

    // MARK: - Verifier

    /// shareV = Y = y*P + w0*N.
    public static func verifierShare(y: Bytes, w0: Bytes) throws(CryptoError) -> Bytes {
        let mask = try P256Point.decode(n).times(P256Scalar.exact(w0))
        return try P256Point.generator(times: P256Scalar.exact(y)).adding(mask).checked().encoded()
    }

    /// The verifier's keys for a shareP: Z = y*(X - w0*M), V = y*L. A shareP that is not a
    /// point on the curve, is the identity, or cancels the mask is refused.
    public static func verifierFinish(y: Bytes, w0: Bytes, l: Bytes, shareP: Bytes, shareV: Bytes,
                                      identities: Identities) throws(CryptoError) -> KeySchedule {
        let scalarY = try P256Scalar.exact(y)
        let unmasked = try P256Point.decode(shareP).adding(P256Point.decode(m).times(P256Scalar.exact(w0)).negated()).checked()
        let z = try unmasked.times(scalarY).checked().encoded()
        let v = try P256Point.decode(l).times(scalarY).checked().encoded()
        return try schedule(identities: identities, shareP: shareP, shareV: shareV, z: z, v: v, w0: w0)
    }

    // MARK: - Transcript and key schedule (section 3.3, 3.4)

    /// TT: each field preceded by its length as an 8-byte little-endian number.
    public static func transcript(identities: Identities, shareP: Bytes, shareV: Bytes, z: Bytes, v: Bytes, w0: Bytes) -> Bytes {
        var out: Bytes = []
        for field in [identities.context, identities.idProver, identities.idVerifier, m, n, shareP, shareV, z, v, w0] {
            var length = UInt64(field.count)
            for _ in 0..<8 {
                out.append(UInt8(length & 0xff))
                length >>= 8
            }
            out += field
        }
        return out
    }

    static func schedule(identities: Identities, shareP: Bytes, shareV: Bytes, z: Bytes, v: Bytes,
                         w0: Bytes) throws(CryptoError) -> KeySchedule {
        let tt = transcript(identities: identities, shareP: shareP, shareV: shareV, z: z, v: v, w0: w0)
        let kMain = SHA256.hash(tt)
        let confirmationKeys: Bytes, kShared: Bytes
        do {
            confirmationKeys = try HKDF.deriveKey(inputKeyMaterial: kMain, salt: [], info: confirmationKeysInfo, outputByteCount: 64)
            kShared = try HKDF.deriveKey(inputKeyMaterial: kMain, salt: [], info: sharedKeyInfo, outputByteCount: 32)
        } catch {
            throw .openSSL("HKDF: \(error)")
        }
        let kConfirmP = Array(confirmationKeys[..<32]), kConfirmV = Array(confirmationKeys[32...])
        return KeySchedule(transcript: tt, kMain: kMain, kConfirmP: kConfirmP, kConfirmV: kConfirmV, kShared: kShared,
                           confirmP: HMACSHA256.authenticationCode(key: kConfirmP, message: shareV),
                           confirmV: HMACSHA256.authenticationCode(key: kConfirmV, message: shareP), z: z, v: v)
    }

    /// Checks a received confirmation in constant time (CRYPTO_memcmp).
    public static func isValidConfirmation(_ received: Bytes, expected: Bytes) -> Bool {
        ConstantTime.equals(received, expected)
    }
}

// A P-256 public key held as an OpenSSL EVP_PKEY, imported only after the point is checked.
import COpenSSL
import CShims

/// The fixed DER prefix of a SubjectPublicKeyInfo for an uncompressed P-256 point
/// (id-ecPublicKey, prime256v1, BIT STRING of 66 bytes). Prefixing it lets one decoder,
/// OpenSSL's, check every key we accept, whichever encoding it arrived in.
let p256SPKIPrefix: Bytes = [
    0x30, 0x59, 0x30, 0x13, 0x06, 0x07, 0x2a, 0x86, 0x48, 0xce, 0x3d, 0x02, 0x01, 0x06, 0x08,
    0x2a, 0x86, 0x48, 0xce, 0x3d, 0x03, 0x01, 0x07, 0x03, 0x42, 0x00,
]

/// An immutable P-256 public key. The EVP_PKEY is never mutated after import, which OpenSSL 3
/// documents as safe to share across threads for verify and derive; hence @unchecked Sendable.
public final class P256PublicKey: @unchecked Sendable, Hashable, CustomStringConvertible {
    /// Length of a SEC1 uncompressed point: 0x04 || X(32) || Y(32).
    public static let sec1Length = 65

    let pkey: OpaquePointer
    /// The SEC1 uncompressed encoding (65 bytes), the form used on every wire in this project.
    public let sec1: Bytes

    /// Imports a SEC1 uncompressed point. Compressed points, the point at infinity, wrong lengths
    /// and points that are not on the curve are refused.
    ///
    /// This runs twice per handshake (the phone's ephemeral key, and our own), so it does not
    /// go through d2i_PUBKEY, whose decoder framework costs more than a scalar multiplication
    /// in OpenSSL 3.0. The point is set on a P-256 parameters template, which decodes it and
    /// checks that it is on the curve (with first byte 0x04 and 65 bytes it cannot be the
    /// point at infinity, and coordinates >= p are refused): the checks of `init(adopting:)`
    /// would only repeat that, and re-encoding would reproduce `bytes`.
    public convenience init(sec1 bytes: Bytes) throws {
        guard bytes.count == Self.sec1Length else {
            throw CryptoError.invalidPublicKey("expected \(Self.sec1Length) bytes, got \(bytes.count)")
        }
        guard bytes[0] == 0x04 else {
            throw CryptoError.invalidPublicKey("not an uncompressed point (first byte 0x\(Bytes([bytes[0]]).hexString))")
        }
        guard let key = P256Curve.publicKey(fromSEC1: bytes) else {
            _ = OpenSSL.drainErrors()
            throw CryptoError.invalidPublicKey("point is not on the curve")
        }
        self.init(checkedPoint: key, sec1: bytes)
    }

    /// Takes ownership of a P-256 key built from `sec1` by `P256Curve.publicKey(fromSEC1:)`.
    private init(checkedPoint key: OpaquePointer, sec1: Bytes) {
        self.pkey = key
        self.sec1 = sec1
    }

    /// Imports a DER SubjectPublicKeyInfo. It must hold a P-256 key and nothing may follow it.
    public convenience init(spkiDER der: Bytes) throws {
        guard !der.isEmpty, der.count <= 4096 else {
            throw CryptoError.invalidPublicKey("SPKI of \(der.count) bytes")
        }
        let decoded: OpaquePointer? = der.withUnsafeBufferPointer { buffer in
            var cursor: UnsafePointer<UInt8>? = buffer.baseAddress
            guard let key = d2i_PUBKEY(nil, &cursor, buffer.count) else { return nil }
            guard let end = cursor, end == buffer.baseAddress! + buffer.count else {
                EVP_PKEY_free(key)
                return nil
            }
            return key
        }
        guard let key = decoded else {
            _ = OpenSSL.drainErrors()
            throw CryptoError.invalidPublicKey("not a DER SubjectPublicKeyInfo, or a point not on the curve")
        }
        try self.init(adopting: key)
    }

    /// Imports a PEM "PUBLIC KEY" block.
    public convenience init(pemRepresentation pem: String) throws {
        let key: OpaquePointer? = try OpenSSL.withReadBIO(Bytes(pem.utf8)) { bio in
            PEM_read_bio_PUBKEY(bio, nil, refusePassphrase, nil)
        }
        guard let key else {
            _ = OpenSSL.drainErrors()
            throw CryptoError.invalidPublicKey("no PEM PUBLIC KEY block")
        }
        try self.init(adopting: key)
    }

    /// Takes ownership of `key`, checking that it is a P-256 key whose point passes OpenSSL's
    /// public-key check. Frees it on failure.
    init(adopting key: OpaquePointer) throws {
        guard P256Curve.isP256(key) else {
            EVP_PKEY_free(key)
            throw CryptoError.invalidPublicKey("not a P-256 key")
        }
        guard P256Curve.publicCheck(key), let encoded = P256Curve.encodedPoint(key) else {
            EVP_PKEY_free(key)
            _ = OpenSSL.drainErrors()
            throw CryptoError.invalidPublicKey("point fails the curve check")
        }
        self.pkey = key
        self.sec1 = encoded
    }

    deinit { EVP_PKEY_free(pkey) }

    /// DER SubjectPublicKeyInfo.
    public var spkiDER: Bytes { p256SPKIPrefix + sec1 }

    /// PEM "PUBLIC KEY" block.
    public func pemRepresentation() throws -> String {
        let bytes = try OpenSSL.collectBIO { PEM_write_bio_PUBKEY($0, pkey) }
        return String(decoding: bytes, as: UTF8.self)
    }

    /// Key ID used by the protocol: the first 8 bytes of SHA-256 over the SEC1 point.
    public var keyID: Bytes { Array(SHA256.hash(sec1).prefix(8)) }

    /// Verifies an ECDSA-SHA256 signature over `message`.
    public func isValidSignature(_ signature: ECDSASignature, for message: Bytes) -> Bool {
        ECDSA.verify(der: signature.derRepresentation, message: message, key: pkey)
    }

    public static func == (lhs: P256PublicKey, rhs: P256PublicKey) -> Bool { lhs.sec1 == rhs.sec1 }
    public func hash(into hasher: inout Hasher) { hasher.combine(sec1) }
    public var description: String { "P256PublicKey(\(sec1.hexString))" }
}

/// A PEM passphrase callback that refuses: without it OpenSSL would prompt on the terminal.
let refusePassphrase: @convention(c) (UnsafeMutablePointer<CChar>?, Int32, Int32, UnsafeMutableRawPointer?) -> Int32 = { _, _, _, _ in 0 }

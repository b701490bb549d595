// A P-256 private key: generation, import/export (raw scalar, PKCS#8 DER and PEM), ECDSA, ECDH.
import COpenSSL
import CShims

/// An immutable P-256 private key. Never printed: `description` shows the public half only.
public final class P256PrivateKey: @unchecked Sendable, CustomStringConvertible {
    let pkey: OpaquePointer
    public let publicKey: P256PublicKey

    /// A fresh key from OpenSSL's CSPRNG.
    public static func generate() throws -> P256PrivateKey {
        guard let key = P256Curve.generateKey() else { throw OpenSSL.failure("EVP_PKEY_generate") }
        // OpenSSL has just computed the public point from the scalar: the pairwise check that
        // guards imported key material would only repeat that scalar multiplication (and this
        // runs once per handshake for the ephemeral key).
        return try P256PrivateKey(adopting: key, checkPairwise: false)
    }

    /// Imports a raw 32-byte big-endian scalar d with 1 <= d < n (known-answer tests, fixed keys).
    public convenience init(rawScalar scalar: Bytes) throws {
        guard scalar.count == 32 else {
            throw CryptoError.invalidPrivateKey("expected a 32-byte scalar, got \(scalar.count) bytes")
        }
        guard P256Curve.isValidScalar(scalar) else {
            throw CryptoError.invalidPrivateKey("scalar out of range [1, n)")
        }
        // RFC 5915 ECPrivateKey { version 1, privateKey d, parameters [0] prime256v1 };
        // OpenSSL computes the public point when the optional [1] field is absent.
        var der: Bytes = [0x30, 0x31, 0x02, 0x01, 0x01, 0x04, 0x20] + scalar
        der += [0xa0, 0x0a, 0x06, 0x08, 0x2a, 0x86, 0x48, 0xce, 0x3d, 0x03, 0x01, 0x07]
        defer { ConstantTime.wipe(&der) }
        let decoded: OpaquePointer? = der.withUnsafeBufferPointer { buffer in
            var cursor: UnsafePointer<UInt8>? = buffer.baseAddress
            return d2i_PrivateKey(EVP_PKEY_EC, nil, &cursor, buffer.count)
        }
        guard let key = decoded else {
            _ = OpenSSL.drainErrors()
            throw CryptoError.invalidPrivateKey("scalar rejected by OpenSSL")
        }
        try self.init(adopting: key)
    }

    /// Imports an unencrypted PKCS#8 PrivateKeyInfo in DER; nothing may follow it.
    public convenience init(pkcs8DER der: Bytes) throws {
        guard !der.isEmpty, der.count <= 4096 else {
            throw CryptoError.invalidPrivateKey("PKCS#8 of \(der.count) bytes")
        }
        let info: OpaquePointer? = der.withUnsafeBufferPointer { buffer in
            var cursor: UnsafePointer<UInt8>? = buffer.baseAddress
            guard let info = d2i_PKCS8_PRIV_KEY_INFO(nil, &cursor, buffer.count) else { return nil }
            guard let end = cursor, end == buffer.baseAddress! + buffer.count else {
                PKCS8_PRIV_KEY_INFO_free(info)
                return nil
            }
            return info
        }
        try self.init(pkcs8Info: info)
    }

    /// Imports an unencrypted PEM "PRIVATE KEY" (PKCS#8) block. Encrypted keys are refused
    /// rather than prompting for a passphrase.
    public convenience init(pemRepresentation pem: String) throws {
        let info: OpaquePointer? = try OpenSSL.withReadBIO(Bytes(pem.utf8)) { bio in
            PEM_read_bio_PKCS8_PRIV_KEY_INFO(bio, nil, refusePassphrase, nil)
        }
        try self.init(pkcs8Info: info)
    }

    private convenience init(pkcs8Info info: OpaquePointer?) throws {
        guard let info else {
            _ = OpenSSL.drainErrors()
            throw CryptoError.invalidPrivateKey("not an unencrypted PKCS#8 private key")
        }
        defer { PKCS8_PRIV_KEY_INFO_free(info) }
        guard let key = EVP_PKCS82PKEY(info) else {
            _ = OpenSSL.drainErrors()
            throw CryptoError.invalidPrivateKey("PKCS#8 does not hold a usable key")
        }
        try self.init(adopting: key)
    }

    /// Takes ownership of `key` after checking it is a P-256 key pair whose halves match (the
    /// pairwise check is skipped only for keys OpenSSL generated in this process).
    init(adopting key: OpaquePointer, checkPairwise: Bool = true) throws {
        guard P256Curve.isP256(key) else {
            EVP_PKEY_free(key)
            throw CryptoError.invalidPrivateKey("not a P-256 key")
        }
        var consistent = true
        if checkPairwise {
            guard let ctx = EVP_PKEY_CTX_new(key, nil) else {
                EVP_PKEY_free(key)
                throw OpenSSL.failure("EVP_PKEY_CTX_new")
            }
            consistent = EVP_PKEY_pairwise_check(ctx) == 1
            EVP_PKEY_CTX_free(ctx)
        }
        guard consistent, let point = P256Curve.encodedPoint(key) else {
            EVP_PKEY_free(key)
            _ = OpenSSL.drainErrors()
            throw CryptoError.invalidPrivateKey("private and public halves do not match")
        }
        self.pkey = key
        self.publicKey = try P256PublicKey(sec1: point)
    }

    deinit { EVP_PKEY_free(pkey) }

    /// The 32-byte big-endian scalar. A secret: callers must not log it.
    public func rawScalar() throws -> Bytes {
        var bn: OpaquePointer? = nil
        guard EVP_PKEY_get_bn_param(pkey, "priv", &bn) == 1, let bn else { throw OpenSSL.failure("EVP_PKEY_get_bn_param") }
        defer { BN_clear_free(bn) }
        var out = Bytes(repeating: 0, count: 32)
        guard BN_bn2binpad(bn, &out, 32) == 32 else { throw OpenSSL.failure("BN_bn2binpad") }
        return out
    }

    /// PKCS#8 PrivateKeyInfo, DER.
    public func pkcs8DER() throws -> Bytes {
        guard let info = EVP_PKEY2PKCS8(pkey) else { throw OpenSSL.failure("EVP_PKEY2PKCS8") }
        defer { PKCS8_PRIV_KEY_INFO_free(info) }
        var out: UnsafeMutablePointer<UInt8>? = nil
        let length = i2d_PKCS8_PRIV_KEY_INFO(info, &out)
        guard length > 0, let out else { throw OpenSSL.failure("i2d_PKCS8_PRIV_KEY_INFO") }
        defer {
            OPENSSL_cleanse(out, Int(length))
            ock_openssl_free(out)
        }
        return Array(UnsafeBufferPointer(start: out, count: Int(length)))
    }

    /// PKCS#8 PEM ("-----BEGIN PRIVATE KEY-----"), unencrypted: protect the file it goes to.
    public func pemRepresentation() throws -> String {
        let bytes = try OpenSSL.collectBIO { PEM_write_bio_PKCS8PrivateKey($0, pkey, nil, nil, 0, nil, nil) }
        return String(decoding: bytes, as: UTF8.self)
    }

    /// ECDSA-SHA256 over `message` (randomized k from OpenSSL's CSPRNG).
    public func signature(for message: Bytes) throws -> ECDSASignature {
        try ECDSASignature(derRepresentation: ECDSA.sign(message: message, key: pkey))
    }

    /// ECDH: the x-coordinate of d·Q (32 bytes). The peer point was checked at import (on the
    /// curve, not infinity); P-256 has cofactor 1, so OpenSSL's full peer validation would
    /// only add a multiplication by the group order, which is why it is not asked for here.
    public func sharedSecret(with peer: P256PublicKey) throws -> Bytes {
        guard let ctx = EVP_PKEY_CTX_new(pkey, nil) else { throw OpenSSL.failure("EVP_PKEY_CTX_new") }
        defer { EVP_PKEY_CTX_free(ctx) }
        guard EVP_PKEY_derive_init(ctx) == 1, EVP_PKEY_derive_set_peer_ex(ctx, peer.pkey, 0) == 1 else {
            throw OpenSSL.failure("EVP_PKEY_derive_set_peer_ex")
        }
        var length = 32
        var secret = Bytes(repeating: 0, count: 32)
        guard EVP_PKEY_derive(ctx, &secret, &length) == 1, length == 32 else {
            throw OpenSSL.failure("EVP_PKEY_derive")
        }
        return secret
    }

    public var description: String { "P256PrivateKey(public: \(publicKey.sec1.hexString))" }
}

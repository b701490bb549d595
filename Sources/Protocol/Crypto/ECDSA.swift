// ECDSA-SHA256 over EVP_DigestSign/EVP_DigestVerify, and the two signature encodings phones send.
import COpenSSL
import CShims

/// How a signature is encoded on the wire.
public enum SignatureEncoding: String, Sendable, CaseIterable {
    /// X9.62 DER SEQUENCE { r INTEGER, s INTEGER }: what SecKeyCreateSignature returns.
    case der
    /// 64 bytes r || s, each 32-byte big-endian: CryptoKit's rawRepresentation.
    case raw
}

/// An ECDSA P-256 signature, validated at construction. Holds both encodings.
public struct ECDSASignature: Sendable, Equatable {
    public let derRepresentation: Bytes
    public let rawRepresentation: Bytes

    /// Strict DER: canonical (minimal) integers, positive, no trailing bytes, each integer
    /// at most 32 bytes of magnitude (larger values can never verify on P-256).
    public init(derRepresentation der: Bytes) throws {
        guard der.count >= 8, der.count <= 72 else {
            throw CryptoError.invalidSignatureEncoding("DER signature of \(der.count) bytes")
        }
        let parsed: Bytes? = der.withUnsafeBufferPointer { buffer in
            var cursor: UnsafePointer<UInt8>? = buffer.baseAddress
            guard let sig = d2i_ECDSA_SIG(nil, &cursor, buffer.count) else { return nil }
            defer { ECDSA_SIG_free(sig) }
            guard let end = cursor, end == buffer.baseAddress! + buffer.count else { return nil }
            // Re-encoding must reproduce the input exactly: this rejects BER forms.
            var reencoded: UnsafeMutablePointer<UInt8>? = nil
            let length = i2d_ECDSA_SIG(sig, &reencoded)
            guard length > 0, let reencoded else { return nil }
            defer { ock_openssl_free(reencoded) }
            guard Int(length) == buffer.count,
                  memcmp(reencoded, buffer.baseAddress!, buffer.count) == 0 else { return nil }
            return ECDSA.raw(from: sig)
        }
        guard let raw = parsed else {
            _ = OpenSSL.drainErrors()
            throw CryptoError.invalidSignatureEncoding("not a canonical DER ECDSA signature")
        }
        self.derRepresentation = der
        self.rawRepresentation = raw
    }

    /// 64-byte r || s.
    public init(rawRepresentation raw: Bytes) throws {
        guard raw.count == 64 else {
            throw CryptoError.invalidSignatureEncoding("raw signature must be 64 bytes, got \(raw.count)")
        }
        guard let sig = ECDSA_SIG_new() else { throw OpenSSL.failure("ECDSA_SIG_new") }
        defer { ECDSA_SIG_free(sig) }
        let r = raw.withUnsafeBufferPointer { BN_bin2bn($0.baseAddress, 32, nil) }
        let s = raw.withUnsafeBufferPointer { BN_bin2bn($0.baseAddress! + 32, 32, nil) }
        guard let r, let s, ECDSA_SIG_set0(sig, r, s) == 1 else { throw OpenSSL.failure("ECDSA_SIG_set0") }
        var out: UnsafeMutablePointer<UInt8>? = nil
        let length = i2d_ECDSA_SIG(sig, &out)
        guard length > 0, let out else { throw OpenSSL.failure("i2d_ECDSA_SIG") }
        defer { ock_openssl_free(out) }
        self.derRepresentation = Array(UnsafeBufferPointer(start: out, count: Int(length)))
        self.rawRepresentation = raw
    }

    /// Parses `bytes` in the given encoding.
    public init(_ bytes: Bytes, encoding: SignatureEncoding) throws {
        switch encoding {
        case .der: try self.init(derRepresentation: bytes)
        case .raw: try self.init(rawRepresentation: bytes)
        }
    }

    /// The bytes in the given encoding.
    public func encoded(as encoding: SignatureEncoding) -> Bytes {
        encoding == .der ? derRepresentation : rawRepresentation
    }
}

enum ECDSA {
    static func sign(message: Bytes, key: OpaquePointer) throws -> Bytes {
        guard let ctx = EVP_MD_CTX_new() else { throw OpenSSL.failure("EVP_MD_CTX_new") }
        defer { EVP_MD_CTX_free(ctx) }
        guard EVP_DigestSignInit(ctx, nil, EVP_sha256(), nil, key) == 1 else { throw OpenSSL.failure("EVP_DigestSignInit") }
        var length = 72
        var out = Bytes(repeating: 0, count: 72)
        let ok = message.withUnsafeBufferPointer { EVP_DigestSign(ctx, &out, &length, $0.baseAddress, $0.count) }
        guard ok == 1 else { throw OpenSSL.failure("EVP_DigestSign") }
        return Array(out.prefix(length))
    }

    /// True only when OpenSSL says 1; errors (bad DER, off-range r or s) count as invalid.
    static func verify(der: Bytes, message: Bytes, key: OpaquePointer) -> Bool {
        guard let ctx = EVP_MD_CTX_new() else { return false }
        defer { EVP_MD_CTX_free(ctx) }
        guard EVP_DigestVerifyInit(ctx, nil, EVP_sha256(), nil, key) == 1 else {
            _ = OpenSSL.drainErrors()
            return false
        }
        let result = der.withUnsafeBufferPointer { sig in
            message.withUnsafeBufferPointer { msg in
                EVP_DigestVerify(ctx, sig.baseAddress, sig.count, msg.baseAddress, msg.count)
            }
        }
        if result != 1 { ERR_clear_error() }
        return result == 1
    }

    /// r || s as 32-byte big-endian halves, or nil when r or s is negative or wider than 32 bytes.
    static func raw(from sig: OpaquePointer) -> Bytes? {
        var r: OpaquePointer? = nil
        var s: OpaquePointer? = nil
        ECDSA_SIG_get0(sig, &r, &s)
        guard let r, let s, BN_is_negative(r) == 0, BN_is_negative(s) == 0 else { return nil }
        var out = Bytes(repeating: 0, count: 64)
        let okR = out.withUnsafeMutableBufferPointer { BN_bn2binpad(r, $0.baseAddress, 32) }
        let okS = out.withUnsafeMutableBufferPointer { BN_bn2binpad(s, $0.baseAddress! + 32, 32) }
        guard okR == 32, okS == 32 else { return nil }
        return out
    }
}

extension P256PublicKey {
    /// Verifies `signature` (in `encoding`) over `message`. Throws `.invalidSignatureEncoding` for
    /// bytes that are not a signature and `.signatureInvalid` for one that does not verify.
    public func verify(signature: Bytes, encoding: SignatureEncoding, message: Bytes) throws {
        let parsed = try ECDSASignature(signature, encoding: encoding)
        guard isValidSignature(parsed, for: message) else { throw CryptoError.signatureInvalid }
    }
}

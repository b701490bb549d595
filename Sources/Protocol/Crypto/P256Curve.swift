// Queries on EVP_PKEYs that the key types share: curve identity, point check, point export.
import COpenSSL

enum P256Curve {
    /// The group order n of P-256, big-endian.
    static let order: Bytes = Bytes(hex: "ffffffff00000000ffffffffffffffffbce6faada7179e84f3b9cac2fc632551")!

    /// True when `key` is an EC key on prime256v1.
    static func isP256(_ key: OpaquePointer) -> Bool {
        guard EVP_PKEY_get_base_id(key) == EVP_PKEY_EC else { return false }
        var name = [CChar](repeating: 0, count: 64)
        var length = 0
        guard EVP_PKEY_get_utf8_string_param(key, "group", &name, name.count, &length) == 1 else {
            _ = OpenSSL.drainErrors()
            return false
        }
        let group = String(decoding: name.prefix(length).map { UInt8(bitPattern: $0) }, as: UTF8.self)
        return group == "prime256v1" || group == "P-256"
    }

    /// OpenSSL's quick public-key check (point on the curve, not infinity). P-256 has
    /// cofactor 1, so this is the complete check without the costly order multiplication.
    static func publicCheck(_ key: OpaquePointer) -> Bool {
        guard let ctx = EVP_PKEY_CTX_new(key, nil) else { return false }
        defer { EVP_PKEY_CTX_free(ctx) }
        return EVP_PKEY_public_check_quick(ctx) == 1
    }

    /// The uncompressed SEC1 point of `key`, or nil.
    static func encodedPoint(_ key: OpaquePointer) -> Bytes? {
        var out = Bytes(repeating: 0, count: P256PublicKey.sec1Length)
        var length = 0
        guard EVP_PKEY_get_octet_string_param(key, "encoded-pub-key", &out, out.count, &length) == 1,
              length == P256PublicKey.sec1Length, out[0] == 0x04 else { return nil }
        return out
    }

    /// True when 1 <= scalar < n, compared as 32-byte big-endian numbers.
    static func isValidScalar(_ scalar: Bytes) -> Bool {
        guard scalar.count == 32, scalar.contains(where: { $0 != 0 }) else { return false }
        for (a, b) in zip(scalar, order) where a != b { return a < b }
        return false // equal to n
    }
}

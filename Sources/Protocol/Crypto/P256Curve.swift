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

    /// A public-only EVP_PKEY on P-256 from a 65-byte SEC1 point, or nil when OpenSSL refuses
    /// it (EC_POINT_oct2point checks that the point is on the curve). The caller owns the key.
    ///
    /// The key takes its domain parameters from a template made once, then gets the point, as
    /// libssl imports a TLS peer's key share: building the group from its name for every key
    /// (EVP_PKEY_fromdata, d2i_PUBKEY) costs several times more.
    static func publicKey(fromSEC1 point: Bytes) -> OpaquePointer? {
        guard point.count == P256PublicKey.sec1Length, let template = DomainParameters.shared.pkey,
              let key = EVP_PKEY_new() else { return nil }
        guard EVP_PKEY_copy_parameters(key, template) == 1,
              point.withUnsafeBufferPointer({ EVP_PKEY_set1_encoded_public_key(key, $0.baseAddress, $0.count) }) == 1 else {
            EVP_PKEY_free(key)
            return nil
        }
        return key
    }

    /// A new P-256 key pair, or nil. The group comes from the parameters template: building
    /// it from its name for every key costs almost as much as the generation itself.
    static func generateKey() -> OpaquePointer? {
        guard let template = DomainParameters.shared.pkey, let ctx = EVP_PKEY_CTX_new_from_pkey(nil, template, nil) else { return nil }
        defer { EVP_PKEY_CTX_free(ctx) }
        var key: OpaquePointer? = nil
        guard EVP_PKEY_keygen_init(ctx) == 1, EVP_PKEY_generate(ctx, &key) == 1 else { return nil }
        return key
    }

    /// A parameters-only P-256 EVP_PKEY, created once and never modified (OpenSSL allows
    /// concurrent reads of an unmodified EVP_PKEY).
    private final class DomainParameters: @unchecked Sendable {
        static let shared = DomainParameters()
        let pkey: OpaquePointer?

        private init() {
            var key: OpaquePointer? = nil
            var group = Array("prime256v1".utf8CString)
            if let ctx = EVP_PKEY_CTX_new_from_name(nil, "EC", nil) {
                defer { EVP_PKEY_CTX_free(ctx) }
                // EVP_PKEY_KEY_PARAMETERS, a composite macro Swift does not import.
                let selection = Int32(OSSL_KEYMGMT_SELECT_DOMAIN_PARAMETERS | OSSL_KEYMGMT_SELECT_OTHER_PARAMETERS)
                _ = group.withUnsafeMutableBufferPointer { name in
                    var params = [OSSL_PARAM_construct_utf8_string(OpenSSL.paramKey("group"), name.baseAddress, 0),
                                  OSSL_PARAM_construct_end()]
                    return EVP_PKEY_fromdata_init(ctx) == 1 ? EVP_PKEY_fromdata(ctx, &key, selection, &params) : 0
                }
            }
            pkey = key
        }
    }

    /// True when 1 <= scalar < n, compared as 32-byte big-endian numbers.
    static func isValidScalar(_ scalar: Bytes) -> Bool {
        guard scalar.count == 32, scalar.contains(where: { $0 != 0 }) else { return false }
        for (a, b) in zip(scalar, order) where a != b { return a < b }
        return false // equal to n
    }
}

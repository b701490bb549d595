// SHA-256, HMAC-SHA256 and HKDF-SHA256 (RFC 5869), all computed by OpenSSL.
import COpenSSL

public enum SHA256 {
    public static let byteCount = 32

    public static func hash(_ data: Bytes) -> Bytes {
        var out = Bytes(repeating: 0, count: byteCount)
        var length: UInt32 = 0
        let ok = data.withUnsafeBufferPointer { EVP_Digest($0.baseAddress, $0.count, &out, &length, EVP_sha256(), nil) }
        // EVP_Digest with the built-in SHA-256 fails only when memory allocation does; an
        // all-zero digest would be a silent lie, so stop the process instead.
        precondition(ok == 1 && length == 32, "EVP_Digest(SHA-256) failed: \(OpenSSL.drainErrors())")
        return out
    }
}

public enum HMACSHA256 {
    public static let byteCount = 32

    public static func authenticationCode(key: Bytes, message: Bytes) -> Bytes {
        var out = Bytes(repeating: 0, count: byteCount)
        var length: UInt32 = 0
        // A zero-length key still needs a valid pointer: OpenSSL treats NULL key as "reuse".
        let keyStorage = key.isEmpty ? [0] : key
        let result = keyStorage.withUnsafeBufferPointer { k in
            message.withUnsafeBufferPointer { m in
                HMAC(EVP_sha256(), k.baseAddress, Int32(key.count), m.baseAddress, m.count, &out, &length)
            }
        }
        precondition(result != nil && length == 32, "HMAC-SHA256 failed: \(OpenSSL.drainErrors())")
        return out
    }

    /// Checks a received MAC in constant time.
    public static func isValid(_ mac: Bytes, key: Bytes, message: Bytes) -> Bool {
        ConstantTime.equals(authenticationCode(key: key, message: message), mac)
    }
}

public enum HKDF {
    /// HKDF-SHA256 extract-and-expand. An empty salt means HashLen zero bytes (RFC 5869 2.2).
    /// outputByteCount must be 1...8160 (255 blocks).
    public static func deriveKey(inputKeyMaterial ikm: Bytes, salt: Bytes, info: Bytes, outputByteCount: Int) throws -> Bytes {
        guard outputByteCount > 0, outputByteCount <= 255 * 32 else {
            throw CryptoError.invalidLength(field: "HKDF output", expected: 32, actual: outputByteCount)
        }
        guard let kdf = FetchedHKDF.shared.kdf else { throw OpenSSL.failure("EVP_KDF_fetch(HKDF)") }
        guard let ctx = EVP_KDF_CTX_new(kdf) else { throw OpenSSL.failure("EVP_KDF_CTX_new") }
        defer { EVP_KDF_CTX_free(ctx) }

        // OSSL_PARAM keeps raw pointers: every buffer must stay alive until EVP_KDF_derive
        // returns, hence the nesting. Empty buffers get one byte of storage and length 0.
        var digest = Array("SHA256".utf8CString)
        var key = ikm.isEmpty ? [0] : ikm
        var saltBytes = salt.isEmpty ? [0] : salt
        var infoBytes = info.isEmpty ? [0] : info
        defer { ConstantTime.wipe(&key) }
        var out = Bytes(repeating: 0, count: outputByteCount)
        let ok = digest.withUnsafeMutableBufferPointer { d in
            key.withUnsafeMutableBytes { k in
                saltBytes.withUnsafeMutableBytes { s in
                    infoBytes.withUnsafeMutableBytes { i in
                        var params = [
                            OSSL_PARAM_construct_utf8_string(OpenSSL.paramKey("digest"), d.baseAddress, 0),
                            OSSL_PARAM_construct_octet_string(OpenSSL.paramKey("key"), k.baseAddress, ikm.count),
                        ]
                        if !salt.isEmpty { params.append(OSSL_PARAM_construct_octet_string(OpenSSL.paramKey("salt"), s.baseAddress, salt.count)) }
                        if !info.isEmpty { params.append(OSSL_PARAM_construct_octet_string(OpenSSL.paramKey("info"), i.baseAddress, info.count)) }
                        params.append(OSSL_PARAM_construct_end())
                        return EVP_KDF_derive(ctx, &out, outputByteCount, &params)
                    }
                }
            }
        }
        guard ok == 1 else { throw OpenSSL.failure("EVP_KDF_derive(HKDF)") }
        return out
    }
}

/// HKDF fetched once (two derivations per handshake): an EVP_KDF is immutable and
/// reference-counted, so one can be shared by every thread for the life of the process.
private final class FetchedHKDF: @unchecked Sendable {
    static let shared = FetchedHKDF()
    let kdf: OpaquePointer? = EVP_KDF_fetch(nil, "HKDF", nil)
}

// AES-GCM with 12-byte nonces and 16-byte tags, and the sealed-box layout nonce || ciphertext || tag.
import COpenSSL

public enum AESGCM {
    public static let nonceLength = 12
    public static let tagLength = 16

    /// Encrypts `plaintext` under `key` (16, 24 or 32 bytes; the product uses 32) and `nonce`
    /// (12 bytes), authenticating `aad`. The caller guarantees a (key, nonce) pair is never reused.
    public static func seal(_ plaintext: Bytes, key: Bytes, nonce: Bytes, authenticating aad: Bytes = []) throws -> (ciphertext: Bytes, tag: Bytes) {
        let cipher = try Self.cipher(for: key)
        try checkNonce(nonce)
        guard let ctx = EVP_CIPHER_CTX_new() else { throw OpenSSL.failure("EVP_CIPHER_CTX_new") }
        defer { EVP_CIPHER_CTX_free(ctx) }
        guard EVP_EncryptInit_ex(ctx, cipher, nil, key, nonce) == 1 else { throw OpenSSL.failure("EVP_EncryptInit_ex") }
        var length: Int32 = 0
        if !aad.isEmpty {
            guard EVP_EncryptUpdate(ctx, nil, &length, aad, Int32(aad.count)) == 1 else { throw OpenSSL.failure("EVP_EncryptUpdate(aad)") }
        }
        var ciphertext = Bytes(repeating: 0, count: plaintext.count)
        if !plaintext.isEmpty {
            guard EVP_EncryptUpdate(ctx, &ciphertext, &length, plaintext, Int32(plaintext.count)) == 1,
                  Int(length) == plaintext.count else { throw OpenSSL.failure("EVP_EncryptUpdate") }
        }
        var tail = Bytes(repeating: 0, count: 16)
        guard EVP_EncryptFinal_ex(ctx, &tail, &length) == 1, length == 0 else { throw OpenSSL.failure("EVP_EncryptFinal_ex") }
        var tag = Bytes(repeating: 0, count: tagLength)
        guard EVP_CIPHER_CTX_ctrl(ctx, EVP_CTRL_GCM_GET_TAG, Int32(tagLength), &tag) == 1 else { throw OpenSSL.failure("EVP_CTRL_GCM_GET_TAG") }
        return (ciphertext, tag)
    }

    /// Decrypts and authenticates. Any mismatch is `.authenticationFailed` and no plaintext,
    /// not even a partial one, leaves this function.
    public static func open(ciphertext: Bytes, tag: Bytes, key: Bytes, nonce: Bytes, authenticating aad: Bytes = []) throws -> Bytes {
        let cipher = try Self.cipher(for: key)
        try checkNonce(nonce)
        guard tag.count == tagLength else { throw CryptoError.invalidLength(field: "tag", expected: tagLength, actual: tag.count) }
        guard let ctx = EVP_CIPHER_CTX_new() else { throw OpenSSL.failure("EVP_CIPHER_CTX_new") }
        defer { EVP_CIPHER_CTX_free(ctx) }
        guard EVP_DecryptInit_ex(ctx, cipher, nil, key, nonce) == 1 else { throw OpenSSL.failure("EVP_DecryptInit_ex") }
        var length: Int32 = 0
        if !aad.isEmpty {
            guard EVP_DecryptUpdate(ctx, nil, &length, aad, Int32(aad.count)) == 1 else { throw OpenSSL.failure("EVP_DecryptUpdate(aad)") }
        }
        var plaintext = Bytes(repeating: 0, count: ciphertext.count)
        if !ciphertext.isEmpty {
            guard EVP_DecryptUpdate(ctx, &plaintext, &length, ciphertext, Int32(ciphertext.count)) == 1 else {
                throw OpenSSL.failure("EVP_DecryptUpdate")
            }
        }
        var tagCopy = tag
        guard EVP_CIPHER_CTX_ctrl(ctx, EVP_CTRL_GCM_SET_TAG, Int32(tagLength), &tagCopy) == 1 else { throw OpenSSL.failure("EVP_CTRL_GCM_SET_TAG") }
        var tail = Bytes(repeating: 0, count: 16)
        guard EVP_DecryptFinal_ex(ctx, &tail, &length) == 1 else {
            ConstantTime.wipe(&plaintext)
            ERR_clear_error()
            throw CryptoError.authenticationFailed
        }
        return plaintext
    }

    private static func cipher(for key: Bytes) throws -> OpaquePointer {
        switch key.count {
        case 16: return EVP_aes_128_gcm()
        case 24: return EVP_aes_192_gcm()
        // The product's size (three operations per handshake): fetched once, not per call.
        case 32: return FetchedAES256GCM.shared.cipher ?? EVP_aes_256_gcm()
        default: throw CryptoError.invalidLength(field: "AES-GCM key", expected: 32, actual: key.count)
        }
    }

    private static func checkNonce(_ nonce: Bytes) throws {
        guard nonce.count == nonceLength else {
            throw CryptoError.invalidLength(field: "AES-GCM nonce", expected: nonceLength, actual: nonce.count)
        }
    }
}

/// AES-256-GCM fetched once: an EVP_CIPHER is immutable and reference-counted, so one can be
/// shared by every thread (the legacy EVP_aes_256_gcm() costs an implicit fetch per init).
private final class FetchedAES256GCM: @unchecked Sendable {
    static let shared = FetchedAES256GCM()
    let cipher: OpaquePointer? = EVP_CIPHER_fetch(nil, "AES-256-GCM", nil)
}

/// The sealed-box layout the phone app and the on-disk store use: nonce(12) || ciphertext || tag(16).
public struct SealedBox: Sendable, Equatable {
    /// Overhead of the layout: 12-byte nonce plus 16-byte tag.
    public static let overhead = AESGCM.nonceLength + AESGCM.tagLength

    public let nonce: Bytes
    public let ciphertext: Bytes
    public let tag: Bytes

    /// The combined bytes nonce || ciphertext || tag.
    public var combined: Bytes { nonce + ciphertext + tag }

    /// Splits combined bytes. The length is checked first: anything of 28 bytes or less
    /// (no room for a ciphertext byte) is refused before any decryption is attempted.
    public init(combined: Bytes) throws {
        guard combined.count > Self.overhead else { throw CryptoError.sealedBoxTooShort(actual: combined.count) }
        nonce = Array(combined[0..<AESGCM.nonceLength])
        ciphertext = Array(combined[AESGCM.nonceLength..<(combined.count - AESGCM.tagLength)])
        tag = Array(combined[(combined.count - AESGCM.tagLength)...])
    }

    /// Seals `plaintext` (at least one byte) under a 32-byte key with a fresh random nonce.
    public init(sealing plaintext: Bytes, key: Bytes, authenticating aad: Bytes = [], random: RandomSource = SystemRandom()) throws {
        guard key.count == 32 else { throw CryptoError.invalidLength(field: "AES-256-GCM key", expected: 32, actual: key.count) }
        guard !plaintext.isEmpty else { throw CryptoError.invalidLength(field: "plaintext", expected: 1, actual: 0) }
        let nonce = try random.randomBytes(AESGCM.nonceLength)
        let sealed = try AESGCM.seal(plaintext, key: key, nonce: nonce, authenticating: aad)
        self.nonce = nonce
        self.ciphertext = sealed.ciphertext
        self.tag = sealed.tag
    }

    /// Opens under a 32-byte key; `.authenticationFailed` on any tampering.
    public func open(key: Bytes, authenticating aad: Bytes = []) throws -> Bytes {
        guard key.count == 32 else { throw CryptoError.invalidLength(field: "AES-256-GCM key", expected: 32, actual: key.count) }
        return try AESGCM.open(ciphertext: ciphertext, tag: tag, key: key, nonce: nonce, authenticating: aad)
    }
}

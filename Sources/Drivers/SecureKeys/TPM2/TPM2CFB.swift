// AES-128 in CFB mode with full-block feedback, the TPM's parameter-encryption cipher for the
// vault's sessions (Part 1 §21.3, "CFB Mode Parameter Encryption"; CFB128 as in SP 800-38A).
import COpenSSL
import Protocol

enum TPM2CFB {
    /// Encrypts (`encrypt`) or decrypts `data` under a 16-byte key and 16-byte IV. CFB keeps the
    /// length; OpenSSL only fails on allocation, reported as nil.
    static func apply(_ data: Bytes, key: Bytes, iv: Bytes, encrypt: Bool) -> Bytes? {
        precondition(key.count == 16 && iv.count == 16)
        guard !data.isEmpty else { return [] }
        guard let ctx = EVP_CIPHER_CTX_new() else { return nil }
        defer { EVP_CIPHER_CTX_free(ctx) }
        guard EVP_CipherInit_ex(ctx, EVP_aes_128_cfb128(), nil, key, iv, encrypt ? 1 : 0) == 1 else { return nil }
        var output = Bytes(repeating: 0, count: data.count + 16)
        var length: Int32 = 0
        guard EVP_CipherUpdate(ctx, &output, &length, data, Int32(data.count)) == 1 else { return nil }
        var total = Int(length)
        let final = output.withUnsafeMutableBufferPointer { buffer in
            EVP_CipherFinal_ex(ctx, buffer.baseAddress! + total, &length)
        }
        guard final == 1 else { return nil }
        total += Int(length)
        guard total == data.count else { ConstantTime.wipe(&output); return nil }
        // Cut in place: no second copy of the plaintext is left unwiped.
        output.removeLast(output.count - total)
        return output
    }
}

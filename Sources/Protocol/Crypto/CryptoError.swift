// One typed error for everything the crypto core can refuse. Messages name the field, never a secret.

public enum CryptoError: Error, Equatable, Sendable, CustomStringConvertible {
    /// A public key that is not a valid P-256 point in the expected encoding.
    case invalidPublicKey(String)
    /// A private key that is not a valid P-256 key in the expected encoding.
    case invalidPrivateKey(String)
    /// A signature whose bytes are not a valid encoding (bad DER, wrong length, trailing data).
    case invalidSignatureEncoding(String)
    /// A well-formed signature that does not verify.
    case signatureInvalid
    /// AES-GCM open failed: wrong key, nonce, AAD, or tampered ciphertext or tag.
    case authenticationFailed
    /// An input of the wrong size.
    case invalidLength(field: String, expected: Int, actual: Int)
    /// A sealed box shorter than nonce + tag + one byte.
    case sealedBoxTooShort(actual: Int)
    /// OpenSSL failed where it should not (allocation, provider missing); carries its error string.
    case openSSL(String)

    public var description: String {
        switch self {
        case .invalidPublicKey(let why): return "invalid public key: \(why)"
        case .invalidPrivateKey(let why): return "invalid private key: \(why)"
        case .invalidSignatureEncoding(let why): return "invalid signature encoding: \(why)"
        case .signatureInvalid: return "signature does not verify"
        case .authenticationFailed: return "authentication failed"
        case .invalidLength(let field, let expected, let actual):
            return "\(field): expected \(expected) bytes, got \(actual)"
        case .sealedBoxTooShort(let actual): return "sealed box too short: \(actual) bytes (need more than 28)"
        case .openSSL(let what): return "OpenSSL: \(what)"
        }
    }
}

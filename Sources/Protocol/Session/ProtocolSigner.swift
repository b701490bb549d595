// Long-term keys sign through this protocol so they can live elsewhere: the phone's in the
// Secure Enclave, the car's later in a TPM or PKCS#11 token.

public protocol ProtocolSigner: Sendable {
    var publicKey: P256PublicKey { get }
    /// ECDSA-SHA256 over `message`.
    func signature(for message: Bytes) throws -> ECDSASignature
}

extension P256PrivateKey: ProtocolSigner {}

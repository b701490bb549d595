// Long-term keys sign through this protocol so they can live elsewhere: the phone's in the
// Secure Enclave, the car's later in a TPM or PKCS#11 token.

public protocol ProtocolSigner: Sendable {
    var publicKey: P256PublicKey { get }
    /// ECDSA-SHA256 over `message`.
    func signature(for message: Bytes) throws -> ECDSASignature
}

extension P256PrivateKey: ProtocolSigner {}

/// A long-term key that can also do static ECDH (the car identity key for the advertising-key
/// grant, docs/protocol.md section 18.12; a Secure Enclave key can too).
public protocol ProtocolKeyAgreement: ProtocolSigner {
    /// The 32-byte x-coordinate of ECDH(self, peer).
    func sharedSecret(with peer: P256PublicKey) throws -> Bytes
}

extension P256PrivateKey: ProtocolKeyAgreement {}

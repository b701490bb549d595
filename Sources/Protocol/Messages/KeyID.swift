// The 8-byte name of a phone key: what Hello carries instead of the full public key.

/// First 8 bytes of SHA-256 over the phone's long-term SEC1 public key. Only a lookup handle:
/// the car always verifies signatures with the full enrolled key, never trusts the ID alone.
public struct KeyID: Hashable, Sendable, CustomStringConvertible {
    public static let length = 8
    public let bytes: Bytes

    public init(bytes: Bytes) throws(MessageFormatError) {
        guard bytes.count == KeyID.length else {
            throw .invalidField(field: "keyID", reason: "must be \(KeyID.length) bytes, got \(bytes.count)")
        }
        self.bytes = bytes
    }

    /// The ID of a long-term public key.
    public init(publicKey: P256PublicKey) {
        self.bytes = Array(SHA256.hash(publicKey.sec1).prefix(KeyID.length))
    }

    public var description: String { bytes.hexString }
}

// Numbers every message codec shares: the size bound, the protocol version and the type bytes.

/// Protocol-wide wire constants. Changing any of these is a new protocol version.
public enum Wire {
    /// Largest message accepted or produced: the GATT characteristic value limit the phone app
    /// negotiates, and the bound that keeps every parser's work small and predictable.
    public static let maxMessageLength = 1024
    /// The only protocol version this implementation speaks.
    public static let version: UInt8 = 0x01
    /// SEC1 uncompressed P-256 point: 0x04 || X(32) || Y(32).
    public static let publicKeyLength = 65
    /// Random challenge chosen by the car.
    public static let challengeLength = 32
    /// Raw r || s ECDSA P-256 signature.
    public static let rawSignatureLength = 64
    /// Longest strict-DER ECDSA P-256 signature (two 33-byte INTEGERs plus headers).
    public static let maxDERSignatureLength = 72
    /// Shortest strict-DER ECDSA signature (two one-byte INTEGERs plus headers).
    public static let minDERSignatureLength = 8
    /// AES-GCM authentication tag.
    public static let tagLength = 16
}

/// The first byte of every message. The AuthResponse keeps the phone app's legacy two-byte
/// header `AA BB`, so its first byte is 0xAA.
public enum MessageType: UInt8, Sendable, CaseIterable {
    case hello = 0x01
    case challenge = 0x02
    case sessionAccepted = 0x03
    case command = 0x10
    case response = 0x11
    /// Owner enrollment (docs/protocol.md section 18.6), cleartext, only while a pairing window is open.
    case pairingHello = 0x20
    case pairingChallenge = 0x21
    case pairingProof = 0x22
    case pairingResult = 0x23
    /// The advertising key for an enrolled owner phone, after PairingResult 0 (section 18.12).
    case advertisingKeyGrant = 0x24
    case fault = 0x7F
    case authResponse = 0xAA

    /// The three types carried in an encrypted record.
    public var isEncrypted: Bool {
        self == .sessionAccepted || self == .command || self == .response
    }
}

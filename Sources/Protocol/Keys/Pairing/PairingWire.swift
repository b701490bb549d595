// The pairing messages (0x20-0x23) carry their own version: 0x02 since SPAKE2+ replaced the
// code MAC of version 0x01, whose proof let an active man in the middle find the code offline.

public enum PairingWire {
    /// The version of PairingHello, PairingChallenge, PairingProof and PairingResult.
    public static let version: UInt8 = 0x02
    /// The code-MAC pairing of apps before SPAKE2+: its PairingHello is answered with
    /// `pairingVersion`, nothing else of it is understood.
    public static let legacyVersion: UInt8 = 0x01
    /// The random ID the car gives each pairing window (part of the SPAKE2+ Context).
    public static let windowIDLength = 16
}

extension ByteReader {
    /// Reads the pairing version byte: 0x02, or 0x01 where `allowLegacy` (PairingHello only).
    mutating func pairingVersion(allowLegacy: Bool = false) throws(MessageFormatError) -> UInt8 {
        let version = try byte("version")
        guard version == PairingWire.version || (allowLegacy && version == PairingWire.legacyVersion) else {
            throw .unsupportedVersion(version)
        }
        return version
    }
}

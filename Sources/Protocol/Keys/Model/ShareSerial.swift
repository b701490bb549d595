// The 8-byte serial number of a share certificate: chosen at random by the issuer, so that a
// share can be revoked without knowing the holder's key.

public struct ShareSerial: Hashable, Sendable, CustomStringConvertible {
    public static let length = 8
    public let bytes: Bytes

    public init(bytes: Bytes) throws(MessageFormatError) {
        guard bytes.count == ShareSerial.length else {
            throw .invalidField(field: "serial", reason: "must be \(ShareSerial.length) bytes, got \(bytes.count)")
        }
        self.bytes = bytes
    }

    /// A fresh serial from `random` (the CLI uses the system CSPRNG).
    public static func random(_ random: any RandomSource) throws -> ShareSerial {
        let bytes = try random.randomBytes(length)
        guard bytes.count == length else { throw CryptoError.invalidLength(field: "serial", expected: length, actual: bytes.count) }
        return try ShareSerial(bytes: bytes)
    }

    public var description: String { bytes.hexString }
}

/// Where a shared key came from: the certificate's serial and the owner key that signed it.
/// Lets a revocation by serial, or of the issuing owner, find the keys it affects.
public struct ShareProvenance: Hashable, Sendable {
    public let serial: ShareSerial
    public let issuer: KeyID

    public init(serial: ShareSerial, issuer: KeyID) {
        self.serial = serial
        self.issuer = issuer
    }
}

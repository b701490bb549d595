// Service-mode authorisation on the serial console (docs/protocol.md 18.13). The car shows a
// challenge; an owner key with `manage`, or a fleet key, signs it on a laptop (`carkey service
// sign`); the engineer pastes the answer back. Both travel as hex on the console.
//
// ServiceChallenge (car -> engineer), 27 + L bytes:
//   0        type 0x48
//   1        version 0x01
//   2..17    nonce (16 random bytes, a new one per challenge)
//   18       vehicleIDLen L (1...32)
//   19..     vehicleID (L)
//   19+L     issuedAt (UInt32 BE, the car's wall time; for the signer to show)
//   23+L     expiresAt (UInt32 BE; issuedAt < expiresAt <= issuedAt + 600)
//
// The car does not trust its own wall clock for the expiry: it keeps the challenge with a
// deadline on its monotonic clock (ServiceChallengeGate). The times are there so the laptop
// refuses to sign a challenge that has visibly run out.

public struct ServiceChallenge: Equatable, Sendable {
    public static let typeByte: UInt8 = 0x48
    public static let version: UInt8 = 0x01
    public static let nonceLength = 16
    public static let fixedLength = 27
    public static let maxLength = fixedLength + VehicleID.maxLength
    public static let maxLifetimeSeconds: UInt32 = 600
    public static let defaultLifetimeSeconds: UInt32 = 300

    public let nonce: Bytes
    public let vehicleID: VehicleID
    public let issuedAt: UInt32
    public let expiresAt: UInt32

    public init(nonce: Bytes, vehicleID: VehicleID, issuedAt: UInt32, expiresAt: UInt32) throws(MessageFormatError) {
        guard nonce.count == Self.nonceLength else { throw .invalidField(field: "nonce", reason: "must be 16 bytes") }
        guard expiresAt > issuedAt, expiresAt - issuedAt <= Self.maxLifetimeSeconds else {
            throw .invalidField(field: "expiresAt", reason: "must be 1 to \(Self.maxLifetimeSeconds) s after issuedAt")
        }
        self.nonce = nonce
        self.vehicleID = vehicleID
        self.issuedAt = issuedAt
        self.expiresAt = expiresAt
    }

    public func encoded() -> Bytes {
        var out: Bytes = [Self.typeByte, Self.version]
        out += nonce
        out.append(UInt8(vehicleID.bytes.count))
        out += vehicleID.bytes
        out.appendBE(issuedAt)
        out.appendBE(expiresAt)
        return out
    }

    /// Strict: exact length, no trailing bytes.
    public static func decode(_ bytes: Bytes) throws(MessageFormatError) -> ServiceChallenge {
        var reader = try ByteReader(bytes, limit: maxLength)
        let challenge = try read(&reader)
        try reader.expectEnd()
        return challenge
    }

    static func read(_ reader: inout ByteReader) throws(MessageFormatError) -> ServiceChallenge {
        let type = try reader.byte("type")
        guard type == typeByte else { throw .invalidField(field: "type", reason: "a service challenge starts with 0x48") }
        let version = try reader.byte("version")
        guard version == Self.version else { throw .unsupportedVersion(version) }
        let nonce = try reader.bytes(nonceLength, "nonce")
        let idLength = Int(try reader.byte("vehicleIDLen"))
        let vehicleID = try VehicleID(bytes: reader.bytes(idLength, "vehicleID"))
        let issuedAt = try reader.uint32BE("issuedAt")
        let expiresAt = try reader.uint32BE("expiresAt")
        return try ServiceChallenge(nonce: nonce, vehicleID: vehicleID, issuedAt: issuedAt, expiresAt: expiresAt)
    }
}

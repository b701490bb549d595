// Plaintext of SessionAccepted (car to phone, counter 0): what the key may do and the car's
// clock, so the phone can compute command expiry on the car's time scale.
//
//   0      role (1 owner, 2 shared)
//   1      permissions (bitmask)
//   2..5   notBefore (UInt32 BE, 0 = none)
//   6..9   notAfter (UInt32 BE, 0xFFFFFFFF = none)
//   10..13 carTime (UInt32 BE, seconds since 1970; the session clock starts here)
//   14     clockTrusted (0 or 1)
//   15..16 sessionLifetime (UInt16 BE, seconds)

public struct SessionAcceptedBody: Equatable, Sendable {
    public static let length = 17

    public var role: KeyRole
    public var permissions: Permissions
    public var notBefore: UInt32
    public var notAfter: UInt32
    public var carTime: UInt32
    public var clockTrusted: Bool
    public var sessionLifetime: UInt16

    public init(role: KeyRole, permissions: Permissions, notBefore: UInt32, notAfter: UInt32,
                carTime: UInt32, clockTrusted: Bool, sessionLifetime: UInt16) {
        self.role = role
        self.permissions = permissions
        self.notBefore = notBefore
        self.notAfter = notAfter
        self.carTime = carTime
        self.clockTrusted = clockTrusted
        self.sessionLifetime = sessionLifetime
    }

    public func encoded() -> Bytes {
        var out: Bytes = [role.rawValue, permissions.rawValue]
        out.appendBE(notBefore)
        out.appendBE(notAfter)
        out.appendBE(carTime)
        out.append(clockTrusted ? 1 : 0)
        out.appendBE(sessionLifetime)
        return out
    }

    public static func decode(_ bytes: Bytes) throws(MessageFormatError) -> SessionAcceptedBody {
        var reader = try ByteReader(plaintext: bytes)
        let roleByte = try reader.byte("role")
        guard let role = KeyRole(rawValue: roleByte) else {
            throw .invalidField(field: "role", reason: "unknown role \(roleByte)")
        }
        let permissions = Permissions(rawValue: try reader.byte("permissions"))
        let notBefore = try reader.uint32BE("notBefore")
        let notAfter = try reader.uint32BE("notAfter")
        let carTime = try reader.uint32BE("carTime")
        let trusted = try reader.byte("clockTrusted")
        guard trusted <= 1 else { throw .invalidField(field: "clockTrusted", reason: "must be 0 or 1") }
        let lifetime = try reader.uint16BE("sessionLifetime")
        try reader.expectEnd()
        return SessionAcceptedBody(role: role, permissions: permissions, notBefore: notBefore, notAfter: notAfter,
                                   carTime: carTime, clockTrusted: trusted == 1, sessionLifetime: lifetime)
    }
}

// When a key was enrolled and last used: listed with the key, stored apart from it so that
// every session does not rewrite the key record itself.

public struct KeyActivity: Equatable, Sendable {
    public let keyID: KeyID
    /// Car wall time at enrollment or share installation (seconds since 1970).
    public var enrolledAt: UInt32
    public var enrolledAtTrusted: Bool
    /// Car wall time of the last established session; 0 = never used.
    public var lastUsedAt: UInt32
    public var lastUseTrusted: Bool
    /// Established sessions so far (saturates).
    public var useCount: UInt32

    public init(keyID: KeyID, enrolledAt: UInt32, enrolledAtTrusted: Bool, lastUsedAt: UInt32 = 0,
                lastUseTrusted: Bool = false, useCount: UInt32 = 0) {
        self.keyID = keyID
        self.enrolledAt = enrolledAt
        self.enrolledAtTrusted = enrolledAtTrusted
        self.lastUsedAt = lastUsedAt
        self.lastUseTrusted = lastUseTrusted
        self.useCount = useCount
    }

    init(keyID: KeyID, enrolledAt now: ProtocolTime) {
        self.init(keyID: keyID, enrolledAt: now.wallSeconds32, enrolledAtTrusted: now.wallClockTrusted)
    }

    mutating func recordUse(at now: ProtocolTime) {
        lastUsedAt = now.wallSeconds32
        lastUseTrusted = now.wallClockTrusted
        useCount = useCount == .max ? .max : useCount + 1
    }
}

/// One row of a key listing (`carkey-agent keys`): no secrets, only public facts.
public struct KeyListing: Equatable, Sendable {
    public let record: KeyRecord
    public let activity: KeyActivity?

    public var keyID: KeyID { record.keyID }
    /// The named level when the set matches one (shared keys), else nil.
    public var level: PermissionLevel? { PermissionLevel(permissions: record.permissions) }
}

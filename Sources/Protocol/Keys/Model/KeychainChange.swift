// What a Keychain operation changed, for the agent to persist in one store transaction
// (sealed records: kind "key", "share", "revocation", and "key-activity").

public enum KeychainChange: Equatable, Sendable {
    /// Store `record.storedBytes()` under kind "key", ID = keyID bytes.
    case putKey(KeyRecord)
    /// Store the certificate exactly as presented under kind "share", ID = serial bytes.
    case putShare(ShareSerial, certificate: Bytes)
    /// Store `entry.storedBytes()` under kind "revocation", ID = `entry.target.storageID`.
    case putRevocation(RevocationEntry)
    /// Store `activity.storedBytes()` under kind "key-activity", ID = keyID bytes.
    case putActivity(KeyActivity)
}

/// The result of applying a revocation.
public struct RevocationOutcome: Equatable, Sendable {
    public let changes: [KeychainChange]
    /// Keys whose sessions must end now (`CarProtocolEngine.terminateSessions(revokedBy:)`
    /// covers them, including sessions of not-yet-remembered share keys).
    public let revokedKeys: [KeyID]
}

/// A revocation the car has applied: the signed object as received and when it was applied.
public struct RevocationEntry: Equatable, Sendable {
    public let revocation: Revocation
    public let signedBytes: Bytes
    public let appliedAt: UInt32
    public let appliedAtTrusted: Bool

    public var target: RevocationTarget { revocation.target }

    public init(_ verified: VerifiedRevocation, appliedAt now: ProtocolTime) {
        self.init(revocation: verified.revocation, signedBytes: verified.signedBytes,
                  appliedAt: now.wallSeconds32, appliedAtTrusted: now.wallClockTrusted)
    }

    init(revocation: Revocation, signedBytes: Bytes, appliedAt: UInt32, appliedAtTrusted: Bool) {
        self.revocation = revocation
        self.signedBytes = signedBytes
        self.appliedAt = appliedAt
        self.appliedAtTrusted = appliedAtTrusted
    }
}

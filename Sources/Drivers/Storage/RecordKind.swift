// The kinds of sealed record. The store treats payloads as opaque bytes; the kind names the
// table a record lives in logically and is bound into its seal, so a row moved to another
// kind is detected like any other tampering.

public struct RecordKind: Hashable, Sendable, CustomStringConvertible {
    public let rawValue: String

    /// 1 to 32 characters of a-z, 0-9 and "-": short, printable, unambiguous in the seal's
    /// associated data and safe to show in messages.
    public init?(rawValue: String) {
        guard StorageName.isValid(rawValue) else { return nil }
        self.rawValue = rawValue
    }

    private init(known: String) { rawValue = known }

    /// Enrolled phone keys (owner and shared), ID = key ID.
    public static let key = RecordKind(known: "key")
    /// Share certificates as presented, ID = serial or holder key ID (the keys engine decides).
    public static let share = RecordKind(known: "share")
    /// Revocations, kept so a revoked share cannot be installed again; ID = serial or key ID.
    public static let revocation = RecordKind(known: "revocation")
    /// When a key was enrolled and last used, ID = key ID (kept apart from the key record so a
    /// session does not rewrite the key itself).
    public static let keyActivity = RecordKind(known: "key-activity")
    /// The car's own identity key (one row, ID = `CarStore.identityRecordID`).
    public static let identity = RecordKind(known: "identity")

    public var description: String { rawValue }
}

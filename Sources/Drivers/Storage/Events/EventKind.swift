// What an audit event is about. Open-ended like RecordKind, so the keys engine and the cloud
// link can add kinds without touching the store.

public struct EventKind: Hashable, Sendable, CustomStringConvertible {
    public let rawValue: String

    /// 1 to 32 characters of a-z, 0-9 and "-".
    public init?(rawValue: String) {
        guard StorageName.isValid(rawValue) else { return nil }
        self.rawValue = rawValue
    }

    private init(known: String) { rawValue = known }

    /// A command or handshake allowed or refused.
    public static let accessDecision = EventKind(known: "access-decision")
    public static let enrollment = EventKind(known: "enrollment")
    public static let share = EventKind(known: "share")
    public static let revocation = EventKind(known: "revocation")
    /// A sealed record failed authentication ("tamper detected").
    public static let tamper = EventKind(known: "tamper")
    public static let actuatorFault = EventKind(known: "actuator-fault")
    /// The store itself: permissions repaired, schema upgraded.
    public static let storage = EventKind(known: "storage")

    /// Shown for a row whose kind was edited into something this code cannot parse.
    static let unknown = EventKind(known: "unknown")

    public var description: String { rawValue }
}

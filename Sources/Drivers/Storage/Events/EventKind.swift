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
    /// A debounced input change (door, trunk, lock state, buttons).
    public static let vehicleState = EventKind(known: "vehicle-state")
    /// The console's service mode and its test actuations.
    public static let service = EventKind(known: "service")
    /// A distance decision (UWB) about a command, passive entry or walk-away.
    public static let proximity = EventKind(known: "proximity")
    /// A signed configuration document applied or refused.
    public static let config = EventKind(known: "config")

    /// Shown for a row whose kind was edited into something this code cannot parse.
    static let unknown = EventKind(known: "unknown")

    public var description: String { rawValue }
}

// An audit event as written (NewEvent) and as stored (StoredEvent). Events never carry key
// material, payloads or command arguments: the caller passes IDs, names and results only.
import Protocol

/// When an event happened: wall-clock seconds and whether that clock was trusted at the time.
public struct EventTime: Equatable, Sendable {
    public let seconds: Int64
    public let trusted: Bool

    public init(seconds: Int64, trusted: Bool) {
        self.seconds = seconds
        self.trusted = trusted
    }
}

/// The fault behind a refusal or failure, as the protocol names it.
public struct EventFault: Equatable, Sendable {
    /// The protocol's numeric fault code, when the fault has one.
    public let code: Int64?
    public let name: String

    public init(code: Int64? = nil, name: String) {
        self.code = code
        self.name = name
    }
}

public struct NewEvent: Equatable, Sendable {
    /// Limits keep one event small; the log is published over MQTT one event per message.
    public static let maximumFieldLength = 128
    public static let maximumDetailLength = 4096

    public var kind: EventKind
    public var time: EventTime
    /// The key ID (hex) that acted, if any.
    public var actor: String?
    /// What was attempted, e.g. "unlock", "enroll", "open sealed record": an `EventAction`'s
    /// word, so writers and the retention rules cannot disagree on its spelling.
    public private(set) var action: String
    /// The outcome, e.g. "allowed", "refused", "ok", "detected".
    public var result: String
    public var fault: EventFault?
    /// A JSON value (checked with SQLite's json_valid on append) with extra, non-secret context.
    public var detailJSON: String?

    public init(kind: EventKind, time: EventTime, actor: String? = nil, action: EventAction, result: String,
                fault: EventFault? = nil, detailJSON: String? = nil) {
        self.kind = kind
        self.time = time
        self.actor = actor
        self.action = action.rawValue
        self.result = result
        self.fault = fault
        self.detailJSON = detailJSON
    }

    func validate() throws {
        if let actor {
            guard (1...Self.maximumFieldLength).contains(actor.utf8.count), Bytes(hex: actor) != nil else {
                throw StorageError.invalidArgument("event actor must be a hex key ID")
            }
        }
        for (name, value) in [("action", action), ("result", result), ("fault name", fault?.name ?? "-")] {
            guard (1...Self.maximumFieldLength).contains(value.utf8.count) else {
                throw StorageError.invalidArgument("event \(name) must be 1 to \(Self.maximumFieldLength) bytes")
            }
        }
        if let detailJSON, detailJSON.utf8.count > Self.maximumDetailLength {
            throw StorageError.invalidArgument("event detail longer than \(Self.maximumDetailLength) bytes")
        }
    }
}

public struct StoredEvent: Equatable, Sendable {
    /// Per-vehicle sequence: 1, 2, 3, ... across restarts, never reused.
    public let seq: Int64
    /// Random UUIDv4 (lower-case, hyphenated) the cloud de-duplicates on.
    public let uuid: String
    public let event: NewEvent
    /// Its link in the audit chain; nil for events written before the chain existed.
    public var chain: EventChainLink? = nil
}

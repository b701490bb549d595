// The result of one configuration document: what the event row and the retained report on
// vehicles/{id}/config/reported say.
import Drivers
import Protocol

struct ConfigOutcome: Equatable, Sendable {
    enum Result: String, Sendable {
        /// In force (live where it could be, the rest at the next start).
        case applied
        /// Not applied: failed verification, forbidden key, schema error.
        case refused
        /// Applied, failed its health check (or the apply was interrupted), last-good back.
        case rolledBack = "rolled-back"
        /// The same document as the last one handled (a retained re-delivery): nothing to do.
        case ignored
    }

    var result: Result
    /// The document's version (nil when it could not be decoded).
    var version: UInt64?
    /// The version of the config in force afterwards (0: the local file).
    var inForce: UInt64
    /// A stable reason: a SignedConfigError name, "forbiddenKey", "schemaInvalid",
    /// "healthCheckFailed", "liveApplyFailed", "interrupted", "writeFailed"; nil when applied.
    var reason: String?
    /// The dotted key the refusal is about, when it is about one.
    var key: String?
    /// Human-readable detail (never a value from the document: it may name the PIN's key only).
    var detail: String?
    var fault: FaultCode?
    /// Changed keys in force now, and changed keys that take effect at the next start.
    var live: [String] = []
    var atNextStart: [String] = []
    /// The signer's key ID (hex) for authentic documents.
    var signer: String?

    var reportFields: [(String, JSONValue)] {
        [
            ("version", version.map { .integer(Int64(clamping: $0)) } ?? .null),
            ("inForce", .integer(Int64(clamping: inForce))),
            ("result", .string(result.rawValue)),
            ("reason", reason.map { .string($0) } ?? .null),
            ("key", key.map { .string($0) } ?? .null),
            ("detail", detail.map { .string($0) } ?? .null),
            ("fault", fault.map { .object([("code", .integer(Int64($0.rawValue))), ("name", .string($0.name))]) } ?? .null),
            ("live", .array(live.map { .string($0) })),
            ("atNextStart", .array(atNextStart.map { .string($0) })),
        ]
    }

    func event(time: EventTime) -> NewEvent {
        let detail = JSONValue.object([
            ("version", version.map { .integer(Int64(clamping: $0)) } ?? .null),
            ("inForce", .integer(Int64(clamping: inForce))),
            ("reason", reason.map { .string($0) } ?? .null),
            ("key", key.map { .string($0) } ?? .null),
            ("atNextStart", .array(atNextStart.map { .string($0) })),
        ])
        // A refusal without a protocol fault (a forbidden key, a schema error) names its reason.
        let fault = fault.map { EventFault(code: Int64($0.rawValue), name: $0.name) } ?? reason.map { EventFault(name: $0) }
        return NewEvent(kind: .config, time: time, actor: signer, action: .configUpdate,
                        result: result.rawValue, fault: fault, detailJSON: detail.serialized)
    }
}

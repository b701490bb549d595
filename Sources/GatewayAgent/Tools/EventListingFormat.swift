// `carkey-agent events` output. The event log is append-only but not sealed, so what it prints
// is made safe first: text cells printable, a detail that is not valid JSON quoted as a string.
import Drivers
import Protocol

enum EventListingFormat {
    static func text(_ events: [StoredEvent]) -> [String] {
        guard !events.isEmpty else { return ["no events"] }
        let rows = events.map { stored -> [String] in
            let event = stored.event
            return [String(stored.seq), ISO8601.format(event.time.seconds), event.time.trusted ? "trusted" : "untrusted",
                    event.kind.rawValue, event.actor ?? "-", event.action, event.result,
                    event.fault.map { fault in fault.name + (fault.code.map { " (\($0))" } ?? "") } ?? "-",
                    event.detailJSON ?? ""]
        }
        return TextTable.render(header: ["SEQ", "TIME", "CLOCK", "KIND", "ACTOR", "ACTION", "RESULT", "FAULT", "DETAIL"], rows: rows)
    }

    /// `isValidJSON` decides whether a stored detail is embedded as JSON or quoted.
    static func json(_ events: [StoredEvent], isValidJSON: (String) -> Bool) -> JSONValue {
        .object([("events", .array(events.map { stored in
            let event = stored.event
            let fault: JSONValue = event.fault.map { fault in
                .object([("code", fault.code.map(JSONValue.integer) ?? .null), ("name", .string(fault.name))])
            } ?? .null
            let detail: JSONValue = event.detailJSON.map { isValidJSON($0) ? .raw($0) : .string($0) } ?? .null
            return .object([
                ("seq", .integer(stored.seq)), ("uuid", .string(stored.uuid)),
                ("time", .string(ISO8601.format(event.time.seconds))), ("timeSeconds", .integer(event.time.seconds)),
                ("trusted", .bool(event.time.trusted)), ("kind", .string(event.kind.rawValue)),
                ("actor", event.actor.map(JSONValue.string) ?? .null), ("action", .string(event.action)),
                ("result", .string(event.result)), ("fault", fault), ("detail", detail),
            ])
        }))])
    }
}

// A tiny JSON writer for the cloud payloads: ordered objects, exact integers, no Foundation.

public indirect enum JSONValue: Sendable, Equatable {
    case null
    case bool(Bool)
    case integer(Int64)
    case string(String)
    case object([(String, JSONValue)])
    case array([JSONValue])
    /// Already-serialised JSON (e.g. an event's detail, checked when it was stored).
    case raw(String)

    public static func == (lhs: JSONValue, rhs: JSONValue) -> Bool { lhs.serialized == rhs.serialized }

    public var serialized: String {
        switch self {
        case .null: return "null"
        case .bool(let value): return value ? "true" : "false"
        case .integer(let value): return String(value)
        case .string(let text): return JSONText.quote(text)
        case .raw(let json): return json
        case .array(let items): return "[" + items.map(\.serialized).joined(separator: ",") + "]"
        case .object(let pairs):
            return "{" + pairs.map { JSONText.quote($0.0) + ":" + $0.1.serialized }.joined(separator: ",") + "}"
        }
    }

    public var bytes: [UInt8] { Array(serialized.utf8) }
}

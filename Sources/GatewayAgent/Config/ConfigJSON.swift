// A JSON tree for the agent's config file. Codable cannot name the exact unknown or bad key
// ("console.baud"), so the file is decoded into this tree and checked by hand (ConfigReader).
import FoundationEssentials

enum ConfigJSON: Decodable, Equatable {
    case null
    case bool(Bool)
    case integer(Int64)
    case number(Double)
    case string(String)
    case array([ConfigJSON])
    case object([String: ConfigJSON])

    init(from decoder: any Decoder) throws {
        let container = try decoder.singleValueContainer()
        if container.decodeNil() {
            self = .null
        } else if let value = try? container.decode(Bool.self) {
            self = .bool(value)
        } else if let value = try? container.decode(Int64.self) {
            self = .integer(value)
        } else if let value = try? container.decode(Double.self) {
            self = .number(value)
        } else if let value = try? container.decode(String.self) {
            self = .string(value)
        } else if let value = try? container.decode([ConfigJSON].self) {
            self = .array(value)
        } else {
            self = .object(try container.decode([String: ConfigJSON].self))
        }
    }

    /// Decodes `bytes`. The reason is cut short and never quotes the file: the decoder's
    /// messages can be long, and a config file holds the service PIN.
    static func parse(_ bytes: [UInt8]) throws(ConfigError) -> ConfigJSON {
        do {
            return try JSONDecoder().decode(ConfigJSON.self, from: Data(bytes))
        } catch let error as DecodingError {
            if case .dataCorrupted(let context) = error, let position = Self.position(in: context.debugDescription) {
                throw .malformedJSON(reason: position)
            }
            throw .malformedJSON(reason: "not a JSON document")
        } catch {
            throw .malformedJSON(reason: "not a JSON document")
        }
    }

    /// "line 3, column 7" from a decoder message, when it has one.
    private static func position(in message: String) -> String? {
        let words = message.split(separator: " ")
        guard let at = words.firstIndex(of: "line"), at + 1 < words.endIndex else { return nil }
        let tail = words[at...].prefix(4).joined(separator: " ").prefix { $0 != "." && $0 != ")" }
        return "error near " + tail
    }

    /// A short name of the JSON type, for "expected X, found Y" messages.
    var typeName: String {
        switch self {
        case .null: return "null"
        case .bool: return "a boolean"
        case .integer, .number: return "a number"
        case .string: return "a string"
        case .array: return "an array"
        case .object: return "an object"
        }
    }
}

// A JSON document as a tree, for strict hand-written validation of files people edit (board
// descriptions, the agent's config): Codable cannot name the exact unknown or bad key
// ("outputs.lock.bias", "console.baud"), so files are decoded into this tree and then checked
// by readers that build the key path into every error.
import FoundationEssentials

public enum JSONTree: Decodable, Equatable, Sendable {
    case null
    case bool(Bool)
    case integer(Int64)
    case number(Double)
    case string(String)
    case array([JSONTree])
    case object([String: JSONTree])

    public init(from decoder: any Decoder) throws {
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
        } else if let value = try? container.decode([JSONTree].self) {
            self = .array(value)
        } else {
            self = .object(try container.decode([String: JSONTree].self))
        }
    }

    /// Decodes `bytes`. On failure the reason is short and never quotes the document (the
    /// decoder's messages can be long, and a config file holds the service PIN): at most the
    /// position, "error near line 3, column 7".
    public static func decode(_ bytes: [UInt8]) -> Result<JSONTree, JSONTreeFailure> {
        do {
            return .success(try JSONDecoder().decode(JSONTree.self, from: Data(bytes)))
        } catch let error as DecodingError {
            if case .dataCorrupted(let context) = error, let position = position(in: context.debugDescription) {
                return .failure(JSONTreeFailure(reason: position))
            }
            return .failure(JSONTreeFailure(reason: "not a JSON document"))
        } catch {
            return .failure(JSONTreeFailure(reason: "not a JSON document"))
        }
    }

    /// "error near line 3, column 7" from a decoder message, when it has one.
    private static func position(in message: String) -> String? {
        let words = message.split(separator: " ")
        guard let at = words.firstIndex(of: "line"), at + 1 < words.endIndex else { return nil }
        let tail = words[at...].prefix(4).joined(separator: " ").prefix { $0 != "." && $0 != ")" }
        return "error near " + tail
    }

    /// A short name of the JSON type, for "expected X, found Y" messages.
    public var typeName: String {
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

public struct JSONTreeFailure: Error, Equatable, Sendable {
    public let reason: String
}

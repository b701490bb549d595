// A JSON document as a tree, for strict hand-written validation of files people edit (board
// descriptions, the agent's config): Codable cannot name the exact unknown or bad key
// ("outputs.lock.bias", "console.baud"), so files are decoded into this tree and then checked
// by readers that build the key path into every error.
// The parser is JSONParser (strict RFC 8259, bounded by JSONLimits); FoundationEssentials'
// JSONDecoder did this before and cost the static binary about 5 MB.

public enum JSONTree: Equatable, Sendable {
    case null
    case bool(Bool)
    case integer(Int64)
    case number(Double)
    case string(String)
    case array([JSONTree])
    case object([String: JSONTree])

    /// Parses `bytes` as one JSON document, or throws the first problem with its byte offset.
    public static func parse(_ bytes: [UInt8], limits: JSONLimits = .standard) throws(JSONParseError) -> JSONTree {
        var parser = JSONParser(bytes, limits: limits)
        return try parser.parseDocument()
    }

    /// Decodes `bytes`. On failure the reason is short and never quotes the document (a config
    /// file holds the service PIN): what was wrong and where, "invalid number near line 3,
    /// column 7".
    public static func decode(_ bytes: [UInt8]) -> Result<JSONTree, JSONTreeFailure> {
        do {
            return .success(try parse(bytes))
        } catch {
            return .failure(JSONTreeFailure(reason: reason(for: error, in: bytes)))
        }
    }

    /// "<summary> near line L, column C" (1-based; the column counts bytes).
    static func reason(for error: JSONParseError, in bytes: [UInt8]) -> String {
        // A wrong encoding is about the whole file: a line and column would mislead.
        if case .notUTF8 = error.kind { return error.summary }
        var line = 1
        var lineStart = 0
        for (offset, byte) in bytes.prefix(min(error.offset, bytes.count)).enumerated() where byte == 0x0A {
            line += 1
            lineStart = offset + 1
        }
        return "\(error.summary) near line \(line), column \(error.offset - lineStart + 1)"
    }

    /// The text, when this is a string (for readers of fixed-shape messages).
    public var stringValue: String? {
        if case .string(let text) = self { return text } else { return nil }
    }

    /// When this is a number that is not a whole one (17.5, 1e-3): "must be an integer, got
    /// 17.5", for readers of integer settings; a whole number already reads as `.integer`.
    /// Numbers only are echoed, never strings (a config file holds the service PIN).
    public var notIntegerProblem: String? {
        if case .number(let value) = self { return "must be an integer, got \(value)" }
        return nil
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

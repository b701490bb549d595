// A JSON tree for strict, hand-written validation: Codable cannot name the exact unknown or bad
// key ("outputs.lock.bias"), so board files are decoded into this tree first and checked by hand.
import FoundationEssentials

enum BoardJSON: Decodable, Equatable {
    case null
    case bool(Bool)
    case integer(Int64)
    case number(Double)
    case string(String)
    case array([BoardJSON])
    case object([String: BoardJSON])

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
        } else if let value = try? container.decode([BoardJSON].self) {
            self = .array(value)
        } else {
            self = .object(try container.decode([String: BoardJSON].self))
        }
    }

    /// Decodes `bytes`; the failure reason is cut short (the decoder's messages can be very long).
    static func parse(_ bytes: [UInt8]) -> Result<BoardJSON, BoardDescriptionError> {
        do {
            return .success(try JSONDecoder().decode(BoardJSON.self, from: Data(bytes)))
        } catch let error as DecodingError {
            let reason: String
            switch error {
            case .dataCorrupted(let context): reason = context.debugDescription
            default: reason = "unexpected structure"
            }
            return .failure(.malformedJSON(reason: String(reason.prefix(160))))
        } catch {
            return .failure(.malformedJSON(reason: "unreadable"))
        }
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

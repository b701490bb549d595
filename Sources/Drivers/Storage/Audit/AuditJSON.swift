// A small strict JSON reader for the audit verifier. Unlike a decoder it keeps each value's
// exact source text, because an event's detail is hashed as the bytes the car published, not
// as any re-serialisation. Duplicate keys are refused: "seq" twice would make a line ambiguous.

public struct AuditJSONError: Error, Equatable, Sendable, CustomStringConvertible {
    public let offset: Int
    public let reason: String
    public var description: String { "JSON error at byte \(offset): \(reason)" }
}

public struct AuditJSONNode: Sendable {
    public enum Value: Sendable {
        case null
        case bool(Bool)
        /// The number's text (validated JSON number syntax).
        case number(String)
        case string(String)
        case array([AuditJSONNode])
        case object([(String, AuditJSONNode)])
    }

    public let value: Value
    /// The bytes between the preceding ':' (or start) and the following ',' '}' ']' (or end),
    /// surrounding whitespace included: exactly what a writer inserted verbatim there.
    public let raw: String

    public var string: String? { if case .string(let text) = value { text } else { nil } }
    public var bool: Bool? { if case .bool(let flag) = value { flag } else { nil } }
    public var isNull: Bool { if case .null = value { true } else { false } }
    public var array: [AuditJSONNode]? { if case .array(let items) = value { items } else { nil } }
    /// An integer number within Int64 (no fraction or exponent).
    public var integer: Int64? { if case .number(let text) = value { Int64(text) } else { nil } }
    public var object: AuditJSONObject? { if case .object(let pairs) = value { AuditJSONObject(pairs: pairs) } else { nil } }
}

public struct AuditJSONObject: Sendable {
    public let pairs: [(String, AuditJSONNode)]
    public subscript(key: String) -> AuditJSONNode? { pairs.first { $0.0 == key }?.1 }
}

public enum AuditJSON {
    /// Nesting beyond this is refused (a hostile line must not exhaust the stack).
    static let maximumDepth = 64

    public static func parse(_ bytes: [UInt8]) throws(AuditJSONError) -> AuditJSONNode {
        var reader = Reader(bytes: bytes)
        let node = try reader.value(depth: 0)
        guard reader.index == bytes.count else { throw reader.fail("trailing characters") }
        return node
    }

    private struct Reader {
        let bytes: [UInt8]
        var index = 0

        func fail(_ reason: String) -> AuditJSONError { AuditJSONError(offset: index, reason: reason) }

        mutating func skipSpace() {
            while index < bytes.count, [0x20, 0x09, 0x0a, 0x0d].contains(bytes[index]) { index += 1 }
        }

        mutating func value(depth: Int) throws(AuditJSONError) -> AuditJSONNode {
            guard depth < AuditJSON.maximumDepth else { throw fail("nested too deeply") }
            let start = index
            skipSpace()
            guard index < bytes.count else { throw fail("value expected") }
            let value: AuditJSONNode.Value
            switch bytes[index] {
            case UInt8(ascii: "{"): value = .object(try object(depth: depth))
            case UInt8(ascii: "["): value = .array(try array(depth: depth))
            case UInt8(ascii: "\""): value = .string(try string())
            case UInt8(ascii: "t"): try literal("true"); value = .bool(true)
            case UInt8(ascii: "f"): try literal("false"); value = .bool(false)
            case UInt8(ascii: "n"): try literal("null"); value = .null
            default: value = .number(try number())
            }
            skipSpace()
            return AuditJSONNode(value: value, raw: String(decoding: bytes[start..<index], as: UTF8.self))
        }

        mutating func object(depth: Int) throws(AuditJSONError) -> [(String, AuditJSONNode)] {
            index += 1
            var pairs = [(String, AuditJSONNode)]()
            skipSpace()
            if index < bytes.count, bytes[index] == UInt8(ascii: "}") { index += 1; return pairs }
            while true {
                skipSpace()
                guard index < bytes.count, bytes[index] == UInt8(ascii: "\"") else { throw fail("key expected") }
                let key = try string()
                guard !pairs.contains(where: { $0.0 == key }) else { throw fail("duplicate key \"\(key)\"") }
                skipSpace()
                guard index < bytes.count, bytes[index] == UInt8(ascii: ":") else { throw fail("':' expected") }
                index += 1
                pairs.append((key, try value(depth: depth + 1)))
                guard index < bytes.count else { throw fail("unterminated object") }
                if bytes[index] == UInt8(ascii: "}") { index += 1; return pairs }
                guard bytes[index] == UInt8(ascii: ",") else { throw fail("',' or '}' expected") }
                index += 1
            }
        }

        mutating func array(depth: Int) throws(AuditJSONError) -> [AuditJSONNode] {
            index += 1
            var items = [AuditJSONNode]()
            skipSpace()
            if index < bytes.count, bytes[index] == UInt8(ascii: "]") { index += 1; return items }
            while true {
                items.append(try value(depth: depth + 1))
                guard index < bytes.count else { throw fail("unterminated array") }
                if bytes[index] == UInt8(ascii: "]") { index += 1; return items }
                guard bytes[index] == UInt8(ascii: ",") else { throw fail("',' or ']' expected") }
                index += 1
            }
        }

        mutating func literal(_ word: String) throws(AuditJSONError) {
            let utf8 = Array(word.utf8)
            guard index + utf8.count <= bytes.count, Array(bytes[index..<index + utf8.count]) == utf8 else {
                throw fail("invalid literal")
            }
            index += utf8.count
        }

        mutating func number() throws(AuditJSONError) -> String {
            let start = index
            func digits(_ reader: inout Reader) -> Int {
                let from = reader.index
                while reader.index < reader.bytes.count, (0x30...0x39).contains(reader.bytes[reader.index]) { reader.index += 1 }
                return reader.index - from
            }
            if index < bytes.count, bytes[index] == UInt8(ascii: "-") { index += 1 }
            let first = index < bytes.count ? bytes[index] : 0
            let count = digits(&self)
            guard count > 0, !(first == UInt8(ascii: "0") && count > 1) else { throw fail("invalid number") }
            if index < bytes.count, bytes[index] == UInt8(ascii: ".") {
                index += 1
                guard digits(&self) > 0 else { throw fail("invalid fraction") }
            }
            if index < bytes.count, bytes[index] | 0x20 == UInt8(ascii: "e") {
                index += 1
                if index < bytes.count, bytes[index] == UInt8(ascii: "+") || bytes[index] == UInt8(ascii: "-") { index += 1 }
                guard digits(&self) > 0 else { throw fail("invalid exponent") }
            }
            return String(decoding: bytes[start..<index], as: UTF8.self)
        }

        mutating func string() throws(AuditJSONError) -> String {
            index += 1
            var out = [UInt8]()
            while index < bytes.count {
                let byte = bytes[index]
                index += 1
                switch byte {
                case UInt8(ascii: "\""):
                    // Invalid UTF-8 is refused rather than repaired: a repaired string would
                    // hash differently from what the car wrote.
                    guard let text = String(validating: out, as: UTF8.self) else { throw fail("invalid UTF-8 in string") }
                    return text
                case UInt8(ascii: "\\"):
                    try escape(into: &out)
                case 0..<0x20:
                    throw fail("control character in string")
                default:
                    out.append(byte)
                }
            }
            throw fail("unterminated string")
        }

        mutating func escape(into out: inout [UInt8]) throws(AuditJSONError) {
            guard index < bytes.count else { throw fail("unterminated escape") }
            let byte = bytes[index]
            index += 1
            switch byte {
            case UInt8(ascii: "\""), UInt8(ascii: "\\"), UInt8(ascii: "/"): out.append(byte)
            case UInt8(ascii: "b"): out.append(0x08)
            case UInt8(ascii: "f"): out.append(0x0c)
            case UInt8(ascii: "n"): out.append(0x0a)
            case UInt8(ascii: "r"): out.append(0x0d)
            case UInt8(ascii: "t"): out.append(0x09)
            case UInt8(ascii: "u"):
                var scalar = try hex4()
                if (0xD800...0xDBFF).contains(scalar) {
                    guard index + 1 < bytes.count, bytes[index] == UInt8(ascii: "\\"), bytes[index + 1] == UInt8(ascii: "u") else {
                        throw fail("unpaired surrogate")
                    }
                    index += 2
                    let low = try hex4()
                    guard (0xDC00...0xDFFF).contains(low) else { throw fail("unpaired surrogate") }
                    scalar = 0x10000 + ((scalar - 0xD800) << 10) + (low - 0xDC00)
                }
                guard let unicode = Unicode.Scalar(scalar) else { throw fail("invalid \\u escape") }
                out += Array(String(Character(unicode)).utf8)
            default:
                throw fail("invalid escape")
            }
        }

        mutating func hex4() throws(AuditJSONError) -> UInt32 {
            guard index + 4 <= bytes.count else { throw fail("short \\u escape") }
            var value: UInt32 = 0
            for byte in bytes[index..<index + 4] {
                guard let digit = byte.hexValue else { throw fail("invalid \\u escape") }
                value = value << 4 | UInt32(digit)
            }
            index += 4
            return value
        }
    }
}

private extension UInt8 {
    var hexValue: UInt8? {
        switch self {
        case 0x30...0x39: return self - 0x30
        case 0x41...0x46: return self - 0x37
        case 0x61...0x66: return self - 0x57
        default: return nil
        }
    }
}

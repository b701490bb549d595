// A strict, bounded RFC 8259 JSON parser producing a JSONTree. It replaces FoundationEssentials'
// JSONDecoder, which alone (with the regex and collection modules it drags in) was about a
// quarter of the static binary. Strict where the decoder was lax: no trailing commas, no
// duplicate keys. Kept from the decoder's behaviour: a number with a fraction or exponent that
// is a whole Int64 (`1.0`, `1e2`) reads as an integer (a fraction that is not whole stays a
// `.number`, which integer readers refuse: never truncated), an integer too large for Int64 as a
// Double, and a leading UTF-8 byte order mark is skipped.
// Encoding: UTF-8 only. A UTF-8 byte order mark is accepted and skipped: RFC 8259 section 8.1
// lets a parser ignore it, Windows editors write it, and it changes no byte of the content, so
// refusing it would only break hand-edited config files. UTF-16 and UTF-32 (a FF FE / FE FF byte
// order mark, or NUL bytes among the first ones, RFC 4627 section 3) are refused by name
// rather than as "unexpected byte 0xff".
// Recursion is one level per nested array or object, capped by `maxDepth`.

struct JSONParser {
    let bytes: [UInt8]
    let limits: JSONLimits
    var index = 0
    var depth = 0
    /// Where the parser is: one step per enclosing member or element, for naming a duplicate key.
    var path: [PathStep] = []

    enum PathStep {
        case key(String)
        case index(Int)
    }

    init(_ bytes: [UInt8], limits: JSONLimits) {
        self.bytes = bytes
        self.limits = limits
    }

    /// The whole document: one value surrounded by optional whitespace.
    mutating func parseDocument() throws(JSONParseError) -> JSONTree {
        guard bytes.count <= limits.maxInputBytes else { throw JSONParseError(.tooLarge, at: limits.maxInputBytes) }
        if let encoding = Self.otherUnicodeEncoding(bytes) { throw JSONParseError(.notUTF8(encoding: encoding), at: 0) }
        if bytes.count >= 3 && bytes[0] == 0xEF && bytes[1] == 0xBB && bytes[2] == 0xBF { index = 3 }
        skipWhitespace()
        guard index < bytes.count else { throw JSONParseError(.empty, at: index) }
        let value = try parseValue()
        skipWhitespace()
        guard index == bytes.count else { throw JSONParseError(.trailingData, at: index) }
        return value
    }

    mutating func parseValue() throws(JSONParseError) -> JSONTree {
        guard index < bytes.count else { throw JSONParseError(.unexpectedEnd, at: index) }
        switch bytes[index] {
        case UInt8(ascii: "{"): return try parseObject()
        case UInt8(ascii: "["): return try parseArray()
        case UInt8(ascii: "\""): return .string(try parseString())
        case UInt8(ascii: "t"): try expectLiteral("true"); return .bool(true)
        case UInt8(ascii: "f"): try expectLiteral("false"); return .bool(false)
        case UInt8(ascii: "n"): try expectLiteral("null"); return .null
        case UInt8(ascii: "-"), UInt8(ascii: "0")...UInt8(ascii: "9"): return try parseNumber()
        case let byte: throw JSONParseError(.unexpectedByte(byte), at: index)
        }
    }

    // MARK: Containers

    private mutating func enter() throws(JSONParseError) {
        guard depth < limits.maxDepth else { throw JSONParseError(.tooDeep, at: index) }
        depth += 1
        index += 1  // the opening bracket
        skipWhitespace()
    }

    private mutating func parseObject() throws(JSONParseError) -> JSONTree {
        try enter()
        var members: [String: JSONTree] = [:]
        if try consumeClosing(UInt8(ascii: "}"), afterComma: false) { return .object(members) }
        while true {
            guard index < bytes.count else { throw JSONParseError(.unexpectedEnd, at: index) }
            guard bytes[index] == UInt8(ascii: "\"") else { throw JSONParseError(.unexpectedByte(bytes[index]), at: index) }
            let keyOffset = index
            let key = try parseString()
            guard members[key] == nil else {
                throw JSONParseError(.duplicateKey, at: keyOffset, keyPath: Self.describe(path + [.key(key)]))
            }
            guard members.count < limits.maxMembers else { throw JSONParseError(.tooManyMembers, at: keyOffset) }
            skipWhitespace()
            try expect(UInt8(ascii: ":"))
            skipWhitespace()
            path.append(.key(key))
            members[key] = try parseValue()
            path.removeLast()
            skipWhitespace()
            if try consumeSeparator(closing: UInt8(ascii: "}")) { return .object(members) }
        }
    }

    private mutating func parseArray() throws(JSONParseError) -> JSONTree {
        try enter()
        var elements: [JSONTree] = []
        if try consumeClosing(UInt8(ascii: "]"), afterComma: false) { return .array(elements) }
        while true {
            guard elements.count < limits.maxMembers else { throw JSONParseError(.tooManyMembers, at: index) }
            path.append(.index(elements.count))
            elements.append(try parseValue())
            path.removeLast()
            skipWhitespace()
            if try consumeSeparator(closing: UInt8(ascii: "]")) { return .array(elements) }
        }
    }

    /// After a member: `,` (then another must follow) or the closing bracket (true).
    private mutating func consumeSeparator(closing: UInt8) throws(JSONParseError) -> Bool {
        guard index < bytes.count else { throw JSONParseError(.unexpectedEnd, at: index) }
        if bytes[index] == UInt8(ascii: ",") {
            index += 1
            skipWhitespace()
            _ = try consumeClosing(closing, afterComma: true)
            return false
        }
        guard bytes[index] == closing else { throw JSONParseError(.unexpectedByte(bytes[index]), at: index) }
        index += 1
        depth -= 1
        return true
    }

    /// True (and the container closed) when the next byte is `closing`; right after a comma
    /// that is the trailing comma RFC 8259 does not allow.
    private mutating func consumeClosing(_ closing: UInt8, afterComma: Bool) throws(JSONParseError) -> Bool {
        guard index < bytes.count, bytes[index] == closing else { return false }
        if afterComma { throw JSONParseError(.trailingComma, at: index) }
        index += 1
        depth -= 1
        return true
    }

    // MARK: Scalars

    private mutating func expectLiteral(_ word: StaticString) throws(JSONParseError) {
        let start = index
        let length = word.utf8CodeUnitCount
        let matches = word.withUTF8Buffer { literal in
            bytes.count - start >= length && (0..<length).allSatisfy { bytes[start + $0] == literal[$0] }
        }
        guard matches else { throw JSONParseError(.invalidLiteral, at: start) }
        index += length
        // `trueish` is not `true` followed by garbage that a later check would name oddly.
        if index < bytes.count, Self.isLetterOrDigit(bytes[index]) { throw JSONParseError(.invalidLiteral, at: start) }
    }

    private mutating func parseNumber() throws(JSONParseError) -> JSONTree {
        let start = index
        if bytes[index] == UInt8(ascii: "-") { index += 1 }
        guard index < bytes.count, Self.isDigit(bytes[index]) else { throw JSONParseError(.invalidNumber, at: start) }
        // No leading zeros: `0` stands alone before the fraction or exponent.
        if bytes[index] == UInt8(ascii: "0") {
            index += 1
            if index < bytes.count, Self.isDigit(bytes[index]) { throw JSONParseError(.invalidNumber, at: start) }
        } else {
            skipDigits()
        }
        var integral = true
        if index < bytes.count, bytes[index] == UInt8(ascii: ".") {
            integral = false
            index += 1
            guard index < bytes.count, Self.isDigit(bytes[index]) else { throw JSONParseError(.invalidNumber, at: start) }
            skipDigits()
        }
        if index < bytes.count, bytes[index] == UInt8(ascii: "e") || bytes[index] == UInt8(ascii: "E") {
            integral = false
            index += 1
            if index < bytes.count, bytes[index] == UInt8(ascii: "+") || bytes[index] == UInt8(ascii: "-") { index += 1 }
            guard index < bytes.count, Self.isDigit(bytes[index]) else { throw JSONParseError(.invalidNumber, at: start) }
            skipDigits()
        }
        if index < bytes.count, Self.isLetterOrDigit(bytes[index]) || bytes[index] == UInt8(ascii: ".") {
            throw JSONParseError(.invalidNumber, at: start)
        }
        let digits = bytes[start..<index]
        if integral {
            if let exact = Self.exactInteger(digits) { return .integer(exact) }
            // Beyond Int64: a Double (rounding must not turn -2^63-1 into Int64.min).
            guard let value = Double(String(decoding: digits, as: UTF8.self)), value.isFinite else {
                throw JSONParseError(.numberOutOfRange, at: start)
            }
            return .number(value)
        }
        // The grammar above is a subset of what Double's parser reads, so this only fails on
        // overflow to infinity.
        guard let value = Double(String(decoding: digits, as: UTF8.self)), value.isFinite else {
            throw JSONParseError(.numberOutOfRange, at: start)
        }
        // A whole number reads as an integer whatever its spelling, as JSONDecoder did
        // ("baud": 115200.0 is accepted where an integer is expected); only up to 2^53, where
        // a Double still holds every integer, so a long fraction is not rounded into one.
        if value == value.rounded(.towardZero), abs(value) <= 9_007_199_254_740_992.0 {
            return .integer(Int64(value))
        }
        return .number(value)
    }

    /// Digits (with an optional minus) as an Int64, or nil on overflow.
    private static func exactInteger(_ digits: ArraySlice<UInt8>) -> Int64? {
        var rest = digits[...]
        let negative = rest.first == UInt8(ascii: "-")
        if negative { rest = rest.dropFirst() }
        var value: Int64 = 0
        for digit in rest {
            // Accumulated negatively so Int64.min fits.
            let (times10, overflow1) = value.multipliedReportingOverflow(by: 10)
            let (next, overflow2) = times10.subtractingReportingOverflow(Int64(digit &- 48))
            if overflow1 || overflow2 { return nil }
            value = next
        }
        if negative { return value }
        return value == Int64.min ? nil : -value
    }

    // MARK: Encoding and naming

    /// "UTF-16" or "UTF-32" when `bytes` start like one of those, else nil: a byte order mark,
    /// or the NUL pattern of RFC 4627 section 3 (JSON text starts with an ASCII character, so
    /// `00 00 00 xx`, `00 xx 00 xx`, `xx 00 00 00`, `xx 00 xx 00`; a two-byte document `00 xx`
    /// or `xx 00`). A NUL elsewhere in UTF-8 text is left to the grammar's own errors.
    static func otherUnicodeEncoding(_ bytes: [UInt8]) -> String? {
        let b = Array(bytes.prefix(4))
        if b == [0xFF, 0xFE, 0, 0] || b == [0, 0, 0xFE, 0xFF] { return "UTF-32" }
        if b.count >= 2, b[0] == 0xFF && b[1] == 0xFE || b[0] == 0xFE && b[1] == 0xFF { return "UTF-16" }
        if b.count == 2, (b[0] == 0) != (b[1] == 0) { return "UTF-16" }
        guard b.count == 4 else { return nil }
        let zero = b.map { $0 == 0 }
        if zero == [true, true, true, false] || zero == [false, true, true, true] { return "UTF-32" }
        if zero == [true, false, true, false] || zero == [false, true, false, true] { return "UTF-16" }
        return nil
    }

    /// `outputs[1].line`: keys as printable ASCII (anything else as `?`), each cut to 64
    /// characters and the whole to 256, since a key may come from the network and is logged.
    static func describe(_ steps: [PathStep]) -> String {
        var out = ""
        for step in steps {
            switch step {
            case .index(let index): out += "[\(index)]"
            case .key(let key):
                if !out.isEmpty { out += "." }
                var shown = String(key.unicodeScalars.prefix(64).map { $0.value >= 0x20 && $0.value < 0x7F ? Character($0) : "?" })
                if key.unicodeScalars.count > 64 { shown += "..." }
                out += shown
            }
        }
        return out.count > 256 ? "..." + out.suffix(253) : out
    }

    // MARK: Bytes

    mutating func skipWhitespace() {
        while index < bytes.count {
            switch bytes[index] {
            case 0x20, 0x09, 0x0A, 0x0D: index += 1
            default: return
            }
        }
    }

    private mutating func skipDigits() {
        while index < bytes.count, Self.isDigit(bytes[index]) { index += 1 }
    }

    private mutating func expect(_ byte: UInt8) throws(JSONParseError) {
        guard index < bytes.count else { throw JSONParseError(.unexpectedEnd, at: index) }
        guard bytes[index] == byte else { throw JSONParseError(.unexpectedByte(bytes[index]), at: index) }
        index += 1
    }

    static func isDigit(_ byte: UInt8) -> Bool { byte >= 0x30 && byte <= 0x39 }

    static func isLetterOrDigit(_ byte: UInt8) -> Bool {
        isDigit(byte) || (byte | 0x20 >= 0x61 && byte | 0x20 <= 0x7A)
    }
}

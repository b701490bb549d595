// What the JSON parser refuses and how much it accepts. The parser reads files people edit and
// messages from the network, so every dimension an input could blow up is capped, and every
// refusal names the byte where it happened (never the text around it: a config file holds the
// service PIN).

/// Caps the parser enforces; exceeding one is a typed error, never a crash or a large allocation.
public struct JSONLimits: Sendable, Equatable {
    /// Longest document, in bytes.
    public var maxInputBytes: Int
    /// Deepest nesting of arrays and objects (the parser recurses once per level).
    public var maxDepth: Int
    /// Longest string (keys included), in bytes of its decoded UTF-8.
    public var maxStringBytes: Int
    /// Most members of one object, or elements of one array.
    public var maxMembers: Int

    public init(maxInputBytes: Int, maxDepth: Int, maxStringBytes: Int, maxMembers: Int) {
        self.maxInputBytes = maxInputBytes
        self.maxDepth = maxDepth
        self.maxStringBytes = maxStringBytes
        self.maxMembers = maxMembers
    }

    /// Generous for every document the car reads (config and board files are capped at 64 KiB by
    /// their readers, MQTT envelopes at 8 KiB), small enough that a hostile one stays cheap.
    public static let standard = JSONLimits(maxInputBytes: 1 << 20, maxDepth: 64,
                                            maxStringBytes: 64 * 1024, maxMembers: 8192)
}

public struct JSONParseError: Error, Equatable, Sendable, CustomStringConvertible {
    public enum Kind: Equatable, Sendable {
        /// Nothing but whitespace.
        case empty
        /// The document ends inside a value.
        case unexpectedEnd
        /// A byte that cannot start or continue what is being read here.
        case unexpectedByte(UInt8)
        /// A complete value followed by something other than whitespace.
        case trailingData
        /// `tru`, `nul`, `falsy` and the like.
        case invalidLiteral
        /// Not the RFC 8259 number grammar (leading zeros, `1.`, `.5`, `+1`, `1e`).
        case invalidNumber
        /// A number too large for a Double (`1e400`).
        case numberOutOfRange
        /// A raw byte below 0x20 inside a string: it must be escaped.
        case controlCharacterInString
        /// A backslash followed by anything but `"\/bfnrtu`.
        case invalidEscape
        /// `\u` without four hex digits.
        case invalidUnicodeEscape
        /// A `\uD800`-`\uDFFF` escape that is not a high surrogate followed by a low one.
        case loneSurrogate
        /// Bytes that are not well-formed UTF-8 (RFC 3629: no overlongs, no encoded surrogates).
        case invalidUTF8
        /// A key that already appeared in the same object; `JSONParseError.keyPath` names it.
        case duplicateKey
        /// UTF-16 or UTF-32 text (a byte order mark or NUL bytes up front): the encoding's name.
        /// RFC 8259 section 8.1 requires UTF-8; an editor saving "Unicode" is the usual cause.
        case notUTF8(encoding: String)
        /// A comma right before `]` or `}`.
        case trailingComma
        case tooLarge
        case tooDeep
        case stringTooLong
        case tooManyMembers
    }

    public let kind: Kind
    /// Zero-based byte offset in the input where the problem was found.
    public let offset: Int
    /// For a duplicate key: where it is, dotted with array indices ("outputs[1].line"), the
    /// key last; printable ASCII only and shortened, as it may come from the network.
    public let keyPath: String?

    public init(_ kind: Kind, at offset: Int, keyPath: String? = nil) {
        self.kind = kind
        self.offset = offset
        self.keyPath = keyPath
    }

    /// The same problem at the same byte; the key path is detail for people.
    public static func == (lhs: JSONParseError, rhs: JSONParseError) -> Bool {
        lhs.kind == rhs.kind && lhs.offset == rhs.offset
    }

    public var description: String {
        if case .notUTF8 = kind { return summary }
        return "\(summary) at byte \(offset)"
    }

    /// A few words for the kind, without any of the document's text.
    public var summary: String {
        switch kind {
        case .empty: return "no JSON value"
        case .unexpectedEnd: return "unexpected end of document"
        case .unexpectedByte(let byte):
            // A printable ASCII byte is shown, anything else by its value.
            return byte >= 0x21 && byte < 0x7f ? "unexpected '\(Character(Unicode.Scalar(byte)))'"
                                                : "unexpected byte 0x" + String(byte, radix: 16)
        case .trailingData: return "data after the JSON value"
        case .invalidLiteral: return "invalid literal"
        case .invalidNumber: return "invalid number"
        case .numberOutOfRange: return "number out of range"
        case .controlCharacterInString: return "unescaped control character in a string"
        case .invalidEscape: return "invalid escape in a string"
        case .invalidUnicodeEscape: return "invalid \\u escape"
        case .loneSurrogate: return "unpaired UTF-16 surrogate escape"
        case .invalidUTF8: return "invalid UTF-8"
        case .duplicateKey: return keyPath.map { "duplicate key \"\($0)\"" } ?? "duplicate key"
        case .notUTF8(let encoding): return "file is \(encoding), expected UTF-8"
        case .trailingComma: return "trailing comma"
        case .tooLarge: return "document too large"
        case .tooDeep: return "nested too deeply"
        case .stringTooLong: return "string too long"
        case .tooManyMembers: return "too many members"
        }
    }
}

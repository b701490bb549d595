// JSON strings: escapes (surrogate pairs checked), raw bytes validated as UTF-8 (RFC 3629), a
// cap on the decoded length. The result is built from bytes already known to be valid, so
// String(decoding:) never has to substitute a replacement character.

extension JSONParser {
    /// Reads a string starting at its opening quote; leaves `index` after the closing quote.
    mutating func parseString() throws(JSONParseError) -> String {
        index += 1  // the opening quote
        var decoded: [UInt8] = []
        while true {
            guard index < bytes.count else { throw JSONParseError(.unexpectedEnd, at: index) }
            let byte = bytes[index]
            switch byte {
            case UInt8(ascii: "\""):
                index += 1
                return String(decoding: decoded, as: UTF8.self)
            case UInt8(ascii: "\\"):
                try appendEscape(to: &decoded)
            case 0x00..<0x20:
                throw JSONParseError(.controlCharacterInString, at: index)
            case 0x20..<0x80:
                decoded.append(byte)
                index += 1
            default:
                let length = try validatedSequenceLength(at: index)
                decoded.append(contentsOf: bytes[index..<index + length])
                index += length
            }
            guard decoded.count <= limits.maxStringBytes else { throw JSONParseError(.stringTooLong, at: index) }
        }
    }

    private mutating func appendEscape(to decoded: inout [UInt8]) throws(JSONParseError) {
        let start = index
        guard index + 1 < bytes.count else { throw JSONParseError(.unexpectedEnd, at: bytes.count) }
        let simple: UInt8?
        switch bytes[index + 1] {
        case UInt8(ascii: "\""): simple = 0x22
        case UInt8(ascii: "\\"): simple = 0x5C
        case UInt8(ascii: "/"): simple = 0x2F
        case UInt8(ascii: "b"): simple = 0x08
        case UInt8(ascii: "f"): simple = 0x0C
        case UInt8(ascii: "n"): simple = 0x0A
        case UInt8(ascii: "r"): simple = 0x0D
        case UInt8(ascii: "t"): simple = 0x09
        case UInt8(ascii: "u"): simple = nil
        default: throw JSONParseError(.invalidEscape, at: start)
        }
        if let simple {
            decoded.append(simple)
            index += 2
            return
        }
        let first = try hexQuad(at: start)
        index = start + 6
        let scalar: UInt32
        switch first {
        case 0xD800...0xDBFF:
            // A high surrogate must be followed at once by an escaped low one.
            guard index + 1 < bytes.count, bytes[index] == UInt8(ascii: "\\"), bytes[index + 1] == UInt8(ascii: "u") else {
                throw JSONParseError(.loneSurrogate, at: start)
            }
            let second = try hexQuad(at: index)
            guard (0xDC00...0xDFFF).contains(second) else { throw JSONParseError(.loneSurrogate, at: start) }
            index += 6
            scalar = 0x10000 + ((first - 0xD800) << 10) + (second - 0xDC00)
        case 0xDC00...0xDFFF:
            throw JSONParseError(.loneSurrogate, at: start)
        default:
            scalar = first
        }
        Self.appendUTF8(scalar, to: &decoded)
    }

    /// The four hex digits after the `\u` at `start`.
    private func hexQuad(at start: Int) throws(JSONParseError) -> UInt32 {
        guard start + 6 <= bytes.count else { throw JSONParseError(.invalidUnicodeEscape, at: start) }
        var value: UInt32 = 0
        for byte in bytes[start + 2..<start + 6] {
            let digit: UInt8
            switch byte {
            case UInt8(ascii: "0")...UInt8(ascii: "9"): digit = byte - UInt8(ascii: "0")
            case UInt8(ascii: "a")...UInt8(ascii: "f"): digit = byte - UInt8(ascii: "a") + 10
            case UInt8(ascii: "A")...UInt8(ascii: "F"): digit = byte - UInt8(ascii: "A") + 10
            default: throw JSONParseError(.invalidUnicodeEscape, at: start)
            }
            value = value << 4 | UInt32(digit)
        }
        return value
    }

    /// Length of the well-formed multi-byte UTF-8 sequence at `start` (RFC 3629 table:
    /// second-byte ranges exclude overlongs, surrogates and code points above U+10FFFF).
    private func validatedSequenceLength(at start: Int) throws(JSONParseError) -> Int {
        let lead = bytes[start]
        let length: Int
        var secondRange: ClosedRange<UInt8> = 0x80...0xBF
        switch lead {
        case 0xC2...0xDF: length = 2
        case 0xE0: length = 3; secondRange = 0xA0...0xBF
        case 0xE1...0xEC, 0xEE...0xEF: length = 3
        case 0xED: length = 3; secondRange = 0x80...0x9F
        case 0xF0: length = 4; secondRange = 0x90...0xBF
        case 0xF1...0xF3: length = 4
        case 0xF4: length = 4; secondRange = 0x80...0x8F
        default: throw JSONParseError(.invalidUTF8, at: start)
        }
        guard start + length <= bytes.count else { throw JSONParseError(.invalidUTF8, at: start) }
        guard secondRange.contains(bytes[start + 1]) else { throw JSONParseError(.invalidUTF8, at: start) }
        for offset in 2..<max(2, length) where !(0x80...0xBF).contains(bytes[start + offset]) {
            throw JSONParseError(.invalidUTF8, at: start)
        }
        return length
    }

    static func appendUTF8(_ scalar: UInt32, to out: inout [UInt8]) {
        switch scalar {
        case 0..<0x80:
            out.append(UInt8(scalar))
        case 0x80..<0x800:
            out.append(UInt8(0xC0 | scalar >> 6))
            out.append(UInt8(0x80 | scalar & 0x3F))
        case 0x800..<0x10000:
            out.append(UInt8(0xE0 | scalar >> 12))
            out.append(UInt8(0x80 | scalar >> 6 & 0x3F))
            out.append(UInt8(0x80 | scalar & 0x3F))
        default:
            out.append(UInt8(0xF0 | scalar >> 18))
            out.append(UInt8(0x80 | scalar >> 12 & 0x3F))
            out.append(UInt8(0x80 | scalar >> 6 & 0x3F))
            out.append(UInt8(0x80 | scalar & 0x3F))
        }
    }
}

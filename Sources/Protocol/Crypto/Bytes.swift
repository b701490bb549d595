// Byte strings and their hex form: the currency of every wire format and test vector.

public typealias Bytes = [UInt8]

extension Array where Element == UInt8 {
    /// Parses an even-length hex string (upper or lower case, no separators).
    /// Returns nil on any other character or an odd length, so callers can name the bad field.
    public init?(hex: String) {
        let utf8 = Array<UInt8>(hex.utf8)
        guard utf8.count % 2 == 0 else { return nil }
        var out = [UInt8]()
        out.reserveCapacity(utf8.count / 2)
        var index = 0
        while index < utf8.count {
            guard let hi = hexNibble(utf8[index]), let lo = hexNibble(utf8[index + 1]) else { return nil }
            out.append(hi << 4 | lo)
            index += 2
        }
        self = out
    }

    /// Lower-case hex, two digits per byte.
    public var hexString: String {
        let digits: [UInt8] = Array("0123456789abcdef".utf8)
        var chars = [UInt8]()
        chars.reserveCapacity(count * 2)
        for byte in self {
            chars.append(digits[Int(byte >> 4)])
            chars.append(digits[Int(byte & 0x0f)])
        }
        return String(decoding: chars, as: UTF8.self)
    }
}

@inline(__always)
private func hexNibble(_ c: UInt8) -> UInt8? {
    switch c {
    case UInt8(ascii: "0")...UInt8(ascii: "9"): return c - UInt8(ascii: "0")
    case UInt8(ascii: "a")...UInt8(ascii: "f"): return c - UInt8(ascii: "a") + 10
    case UInt8(ascii: "A")...UInt8(ascii: "F"): return c - UInt8(ascii: "A") + 10
    default: return nil
    }
}

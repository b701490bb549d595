// Typed failures of the management API codec: every parse is bounded and reports what was short.

public enum MgmtError: Error, Equatable, Sendable, CustomStringConvertible {
    /// Fewer bytes than a field or the header needs.
    case truncated(what: String, needed: Int, available: Int)
    /// The header's parameter length disagrees with the bytes that followed it.
    case lengthMismatch(declared: Int, actual: Int)
    /// A parameter that cannot be encoded (name too long, advertising data too large...).
    case invalidParameter(String)

    public var description: String {
        switch self {
        case .truncated(let what, let needed, let available):
            return "mgmt \(what): needs \(needed) bytes, have \(available)"
        case .lengthMismatch(let declared, let actual):
            return "mgmt packet declares \(declared) parameter bytes but carries \(actual)"
        case .invalidParameter(let reason):
            return "mgmt parameter: \(reason)"
        }
    }
}

/// A bounds-checked little-endian reader over one packet; every read throws instead of trapping.
struct MgmtReader {
    private let bytes: [UInt8]
    private(set) var offset: Int
    let what: String

    init(_ bytes: ArraySlice<UInt8>, what: String) {
        self.bytes = Array(bytes)
        self.offset = 0
        self.what = what
    }

    var remaining: Int { bytes.count - offset }

    mutating func take(_ count: Int) throws(MgmtError) -> [UInt8] {
        guard count >= 0, remaining >= count else {
            throw .truncated(what: what, needed: offset + count, available: bytes.count)
        }
        defer { offset += count }
        return Array(bytes[offset..<offset + count])
    }

    mutating func u8() throws(MgmtError) -> UInt8 { try take(1)[0] }

    mutating func u16() throws(MgmtError) -> UInt16 {
        let b = try take(2)
        return UInt16(b[0]) | UInt16(b[1]) << 8
    }

    mutating func u32() throws(MgmtError) -> UInt32 {
        let b = try take(4)
        return UInt32(b[0]) | UInt32(b[1]) << 8 | UInt32(b[2]) << 16 | UInt32(b[3]) << 24
    }

    mutating func address() throws(MgmtError) -> BluetoothAddress {
        BluetoothAddress(littleEndian: try take(6))!
    }

    mutating func rest() -> [UInt8] {
        defer { offset = bytes.count }
        return Array(bytes[offset...])
    }
}

extension Array where Element == UInt8 {
    mutating func appendLE(_ value: UInt16) {
        append(UInt8(value & 0xFF)); append(UInt8(value >> 8))
    }

    mutating func appendLE(_ value: UInt32) {
        for shift in stride(from: 0, to: 32, by: 8) { append(UInt8((value >> UInt32(shift)) & 0xFF)) }
    }
}

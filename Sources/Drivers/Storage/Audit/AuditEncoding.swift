// Byte writers for the audit chain's canonical encodings. Every variable-length field carries
// its length, so no two different inputs can encode to the same bytes (no JSON in the hash).
import Protocol

struct AuditEncoding {
    private(set) var bytes: Bytes

    init(label: String) { bytes = Bytes(label.utf8) }

    mutating func append(_ raw: Bytes) { bytes += raw }

    mutating func u8(_ value: UInt8) { bytes.append(value) }

    mutating func u32(_ value: UInt32) { withUnsafeBytes(of: value.bigEndian) { bytes += $0 } }

    mutating func u64(_ value: UInt64) { withUnsafeBytes(of: value.bigEndian) { bytes += $0 } }

    /// Two's complement, big-endian.
    mutating func i64(_ value: Int64) { u64(UInt64(bitPattern: value)) }

    /// u32 length || UTF-8 bytes.
    mutating func string(_ text: String) {
        let utf8 = Bytes(text.utf8)
        u32(UInt32(truncatingIfNeeded: utf8.count))
        bytes += utf8
    }

    /// 0x00 when absent; 0x01 || string when present.
    mutating func optionalString(_ text: String?) {
        guard let text else { return u8(0) }
        u8(1)
        string(text)
    }

    /// 0x00 when absent; 0x01 || i64 when present.
    mutating func optionalInteger(_ value: Int64?) {
        guard let value else { return u8(0) }
        u8(1)
        i64(value)
    }
}

// The only way codecs read received bytes: every read is checked against what is left, so a
// short message or a lying length field fails with a named field instead of reading past the end.

struct ByteReader {
    private let bytes: Bytes
    private(set) var offset = 0

    /// Rejects empty and oversized input up front: no codec ever looks at more than
    /// `Wire.maxMessageLength` bytes.
    init(_ bytes: Bytes, limit: Int = Wire.maxMessageLength) throws(MessageFormatError) {
        guard !bytes.isEmpty else { throw .empty }
        guard bytes.count <= limit else { throw .oversized(length: bytes.count, limit: limit) }
        self.bytes = bytes
    }

    /// Plaintexts inside records may legitimately be empty, so they skip the emptiness check.
    init(plaintext bytes: Bytes) throws(MessageFormatError) {
        guard bytes.count <= Wire.maxMessageLength else {
            throw .oversized(length: bytes.count, limit: Wire.maxMessageLength)
        }
        self.bytes = bytes
    }

    var remaining: Int { bytes.count - offset }

    mutating func byte(_ field: String) throws(MessageFormatError) -> UInt8 {
        try bytes(1, field)[0]
    }

    mutating func bytes(_ count: Int, _ field: String) throws(MessageFormatError) -> Bytes {
        guard count >= 0, count <= remaining else {
            throw .truncated(field: field, needed: count, available: remaining)
        }
        let slice = Array(bytes[offset..<(offset + count)])
        offset += count
        return slice
    }

    mutating func uint16BE(_ field: String) throws(MessageFormatError) -> UInt16 {
        let b = try bytes(2, field)
        return UInt16(b[0]) << 8 | UInt16(b[1])
    }

    mutating func uint32BE(_ field: String) throws(MessageFormatError) -> UInt32 {
        try bytes(4, field).reduce(0) { $0 << 8 | UInt32($1) }
    }

    /// Only the phone app's AuthResponse timestamp is little-endian.
    mutating func uint32LE(_ field: String) throws(MessageFormatError) -> UInt32 {
        try bytes(4, field).reversed().reduce(0) { $0 << 8 | UInt32($1) }
    }

    mutating func uint64BE(_ field: String) throws(MessageFormatError) -> UInt64 {
        try bytes(8, field).reduce(0) { $0 << 8 | UInt64($1) }
    }

    /// Everything not yet read (used for the variable-length tail of a message).
    mutating func rest() -> Bytes {
        let slice = Array(bytes[offset...])
        offset = bytes.count
        return slice
    }

    /// Strict decoding: a valid message has no bytes after its last field, so every message
    /// has exactly one encoding and transcripts cannot be padded.
    func expectEnd() throws(MessageFormatError) {
        guard remaining == 0 else { throw .trailingBytes(count: remaining) }
    }

    /// Checks the version byte that follows the type byte in every message we define.
    mutating func version() throws(MessageFormatError) {
        let version = try byte("version")
        guard version == Wire.version else { throw .unsupportedVersion(version) }
    }
}

// The binary forms the agent seals into the store (CarStore payloads). Each starts with a tag
// byte naming the record and a format version, is decoded strictly and boundedly, and has
// exactly one encoding. docs/protocol.md section 18.8 lists them byte by byte.

public enum StoredRecordFormat {
    public static let version: UInt8 = 0x01
    /// Largest stored record (a revocation entry with the longest revocation).
    public static let maxLength = 512

    public static let keyTag: UInt8 = 0x4B        // 'K'
    public static let activityTag: UInt8 = 0x41   // 'A'
    public static let revocationTag: UInt8 = 0x52 // 'R'
}

extension ByteReader {
    /// Tag and format version of a stored record.
    mutating func storedHeader(_ tag: UInt8, _ name: String) throws(MessageFormatError) {
        let found = try byte("tag")
        guard found == tag else { throw .invalidField(field: "tag", reason: "not a stored \(name) record") }
        let version = try byte("formatVersion")
        guard version == StoredRecordFormat.version else { throw .unsupportedVersion(version) }
    }

    mutating func flagByte(_ field: String, allowed: UInt8) throws(MessageFormatError) -> UInt8 {
        let value = try byte(field)
        guard value & ~allowed == 0 else { throw .invalidField(field: field, reason: "undefined bits set") }
        return value
    }
}

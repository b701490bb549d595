// The envelope of SessionAccepted, Command and Response: a cleartext header that is also the
// AES-GCM associated data, then ciphertext and tag.
//
//   0      type (0x03 SessionAccepted, 0x10 Command, 0x11 Response)
//   1      version 0x01
//   2..9   counter (UInt64 BE)
//   10..   ciphertext (same length as the plaintext)
//   last 16 bytes: GCM tag

public struct EncryptedRecord: Equatable, Sendable {
    public static let headerLength = 10
    public static let minLength = headerLength + Wire.tagLength

    public let type: MessageType
    public let counter: UInt64
    public let ciphertext: Bytes
    public let tag: Bytes

    public init(type: MessageType, counter: UInt64, ciphertext: Bytes, tag: Bytes) throws(MessageFormatError) {
        guard type.isEncrypted else {
            throw .invalidField(field: "type", reason: "0x\([type.rawValue].hexString) is not an encrypted type")
        }
        guard tag.count == Wire.tagLength else { throw .invalidField(field: "tag", reason: "must be 16 bytes") }
        guard EncryptedRecord.minLength + ciphertext.count <= Wire.maxMessageLength else {
            throw .oversized(length: EncryptedRecord.minLength + ciphertext.count, limit: Wire.maxMessageLength)
        }
        self.type = type
        self.counter = counter
        self.ciphertext = ciphertext
        self.tag = tag
    }

    /// The header, authenticated as AES-GCM associated data so type, version and counter
    /// cannot be changed without failing decryption.
    public static func header(type: MessageType, counter: UInt64) -> Bytes {
        var out: Bytes = [type.rawValue, Wire.version]
        out.appendBE(counter)
        return out
    }

    public var header: Bytes { EncryptedRecord.header(type: type, counter: counter) }

    public func encoded() -> Bytes { header + ciphertext + tag }

    public static func decode(_ bytes: Bytes) throws(MessageFormatError) -> EncryptedRecord {
        var reader = try ByteReader(bytes)
        let typeByte = try reader.byte("type")
        guard let type = MessageType(rawValue: typeByte), type.isEncrypted else {
            throw .unknownMessageType(typeByte)
        }
        try reader.version()
        let counter = try reader.uint64BE("counter")
        guard reader.remaining >= Wire.tagLength else {
            throw .truncated(field: "tag", needed: Wire.tagLength, available: reader.remaining)
        }
        let ciphertext = try reader.bytes(reader.remaining - Wire.tagLength, "ciphertext")
        let tag = try reader.bytes(Wire.tagLength, "tag")
        return try EncryptedRecord(type: type, counter: counter, ciphertext: ciphertext, tag: tag)
    }
}

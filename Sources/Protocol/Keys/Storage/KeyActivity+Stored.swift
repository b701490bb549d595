// KeyActivity as a sealed store payload (kind "key-activity", ID = key ID).
//
//   0       tag 0x41 ('A')
//   1       format version 0x01
//   2..9    keyID (8)
//   10..13  enrolledAt (UInt32 BE)
//   14..17  lastUsedAt (UInt32 BE, 0 = never)
//   18      flags: bit0 enrolledAt trusted, bit1 lastUsedAt trusted; other bits 0
//   19..22  useCount (UInt32 BE)
// Total 23 bytes.

extension KeyActivity {
    public static let storedLength = 23

    public func storedBytes() -> Bytes {
        var out: Bytes = [StoredRecordFormat.activityTag, StoredRecordFormat.version]
        out += keyID.bytes
        out.appendBE(enrolledAt)
        out.appendBE(lastUsedAt)
        out.append((enrolledAtTrusted ? 0x01 : 0) | (lastUseTrusted ? 0x02 : 0))
        out.appendBE(useCount)
        return out
    }

    public init(storedBytes bytes: Bytes) throws(MessageFormatError) {
        var reader = try ByteReader(bytes, limit: StoredRecordFormat.maxLength)
        try reader.storedHeader(StoredRecordFormat.activityTag, "key activity")
        let keyID = try KeyID(bytes: reader.bytes(KeyID.length, "keyID"))
        let enrolledAt = try reader.uint32BE("enrolledAt")
        let lastUsedAt = try reader.uint32BE("lastUsedAt")
        let flags = try reader.flagByte("flags", allowed: 0x03)
        let useCount = try reader.uint32BE("useCount")
        try reader.expectEnd()
        self.init(keyID: keyID, enrolledAt: enrolledAt, enrolledAtTrusted: flags & 0x01 != 0, lastUsedAt: lastUsedAt,
                  lastUseTrusted: flags & 0x02 != 0, useCount: useCount)
    }
}

// RevocationEntry as a sealed store payload (kind "revocation", ID = target.storageID): the
// signed revocation exactly as received (evidence), and when the car applied it.
//
//   0       tag 0x52 ('R')
//   1       format version 0x01
//   2..5    appliedAt (UInt32 BE, car wall time)
//   6       flags: bit0 appliedAt trusted; other bits 0
//   7..8    revocationLength n (UInt16 BE, 89...120)
//   9..     revocation (n bytes, section 18.4)
// The signature is not verified again on load: the seal already proves the car wrote it.

extension RevocationEntry {
    public func storedBytes() -> Bytes {
        var out: Bytes = [StoredRecordFormat.revocationTag, StoredRecordFormat.version]
        out.appendBE(appliedAt)
        out.append(appliedAtTrusted ? 0x01 : 0)
        out.appendBE(UInt16(signedBytes.count))
        return out + signedBytes
    }

    public init(storedBytes bytes: Bytes) throws(MessageFormatError) {
        var reader = try ByteReader(bytes, limit: StoredRecordFormat.maxLength)
        try reader.storedHeader(StoredRecordFormat.revocationTag, "revocation")
        let appliedAt = try reader.uint32BE("appliedAt")
        let flags = try reader.flagByte("flags", allowed: 0x01)
        let length = Int(try reader.uint16BE("revocationLength"))
        guard length <= Revocation.maxLength else {
            throw .invalidField(field: "revocationLength", reason: "at most \(Revocation.maxLength)")
        }
        let signed = try reader.bytes(length, "revocation")
        try reader.expectEnd()
        self.init(revocation: try Revocation.decode(signed), signedBytes: signed, appliedAt: appliedAt,
                  appliedAtTrusted: flags & 0x01 != 0)
    }
}

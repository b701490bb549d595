// KeyRecord as a sealed store payload (kind "key", ID = key ID).
//
//   0      tag 0x4B ('K')
//   1      format version 0x01
//   2..66  publicKey (65)
//   67     role (1 owner, 2 shared)
//   68     permissions
//   69..72 notBefore (UInt32 BE)
//   73..76 notAfter (UInt32 BE)
//   77     flags: bit0 revoked, bit1 share provenance present; other bits 0
//   78..85 share serial (zeros without provenance)
//   86..93 issuer key ID (zeros without provenance)
// Total 94 bytes.

extension KeyRecord {
    public static let storedLength = 94

    public func storedBytes() -> Bytes {
        var out: Bytes = [StoredRecordFormat.keyTag, StoredRecordFormat.version]
        out += publicKey.sec1
        out.append(role.rawValue)
        out.append(permissions.rawValue)
        out.appendBE(notBefore)
        out.appendBE(notAfter)
        out.append((revoked ? 0x01 : 0) | (share != nil ? 0x02 : 0))
        out += share?.serial.bytes ?? Bytes(repeating: 0, count: ShareSerial.length)
        out += share?.issuer.bytes ?? Bytes(repeating: 0, count: KeyID.length)
        return out
    }

    public init(storedBytes bytes: Bytes) throws(MessageFormatError) {
        var reader = try ByteReader(bytes, limit: StoredRecordFormat.maxLength)
        try reader.storedHeader(StoredRecordFormat.keyTag, "key")
        let publicKey = try reader.publicKey("publicKey")
        let roleByte = try reader.byte("role")
        guard let role = KeyRole(rawValue: roleByte) else { throw .invalidField(field: "role", reason: "unknown role \(roleByte)") }
        let permissions = Permissions(rawValue: try reader.byte("permissions"))
        let notBefore = try reader.uint32BE("notBefore")
        let notAfter = try reader.uint32BE("notAfter")
        let flags = try reader.flagByte("flags", allowed: 0x03)
        let serial = try reader.bytes(ShareSerial.length, "serial")
        let issuer = try reader.bytes(KeyID.length, "issuerKeyID")
        try reader.expectEnd()
        var share: ShareProvenance?
        if flags & 0x02 != 0 {
            guard role == .shared else { throw .invalidField(field: "flags", reason: "an owner key has no share provenance") }
            share = ShareProvenance(serial: try ShareSerial(bytes: serial), issuer: try KeyID(bytes: issuer))
        } else if serial.contains(where: { $0 != 0 }) || issuer.contains(where: { $0 != 0 }) {
            throw .invalidField(field: "serial", reason: "must be zero without share provenance")
        }
        self.init(publicKey: publicKey, role: role, permissions: permissions, notBefore: notBefore, notAfter: notAfter,
                  revoked: flags & 0x01 != 0, share: share)
    }
}

// A revocation: an owner key's signed order to stop honouring a share (by serial) or a key
// (by key ID). The same object arrives over BLE (command 0x06) or, later, from the cloud.
// docs/protocol.md section 18.4 gives the layout byte by byte.
//
//   0        type 0x31
//   1        version 0x01
//   2        vehicleIDLen L (1...32)
//   3..      vehicleID (L)
//   3+L      issuerKeyID (8): the owner key that signs
//   11+L     issuedAt (UInt32 BE, issuer's wall time; informational)
//   15+L     targetKind (1: serial, 2: key ID)
//   16+L     target (8)
//   24+L     signature (64, raw r || s): ECDSA-SHA256 by the issuer over "OCK1-REVOCATION" || bytes 0..<24+L

public struct Revocation: SignerNamedObject, Equatable {
    public static let typeByte: UInt8 = 0x31
    public static let version: UInt8 = 0x01
    public static let signatureLabel: Bytes = Array("OCK1-REVOCATION".utf8)
    public static let fixedBodyLength = 24
    public static let maxLength = fixedBodyLength + VehicleID.maxLength + Wire.rawSignatureLength

    public let vehicleID: VehicleID
    public let issuerKeyID: KeyID
    public let issuedAt: UInt32
    public let target: RevocationTarget
    public let signature: Bytes

    public init(vehicleID: VehicleID, issuerKeyID: KeyID, issuedAt: UInt32, target: RevocationTarget,
                signature: Bytes) throws(MessageFormatError) {
        try Self.checkSignature(signature)
        self.vehicleID = vehicleID
        self.issuerKeyID = issuerKeyID
        self.issuedAt = issuedAt
        self.target = target
        self.signature = signature
    }

    /// Signs a new revocation with the owner key `issuer`.
    public static func issue(by issuer: any ProtocolSigner, vehicleID: VehicleID, target: RevocationTarget,
                             issuedAt: UInt32) throws(KeyObjectError) -> Revocation {
        try issue(by: issuer) { issuerKeyID, signature throws(MessageFormatError) in
            try Revocation(vehicleID: vehicleID, issuerKeyID: issuerKeyID, issuedAt: issuedAt, target: target, signature: signature)
        }
    }

    public var signerKeyID: KeyID { issuerKeyID }

    static func body(vehicleID: VehicleID, issuerKeyID: KeyID, issuedAt: UInt32, target: RevocationTarget) -> Bytes {
        var out: Bytes = [typeByte, version, UInt8(vehicleID.bytes.count)]
        out += vehicleID.bytes
        out += issuerKeyID.bytes
        out.appendBE(issuedAt)
        out.append(target.kind)
        out += target.value
        return out
    }

    public var body: Bytes { Self.body(vehicleID: vehicleID, issuerKeyID: issuerKeyID, issuedAt: issuedAt, target: target) }

    public static func decode(_ bytes: Bytes) throws(MessageFormatError) -> Revocation {
        var reader = try ByteReader(bytes, limit: maxLength)
        let type = try reader.byte("type")
        guard type == typeByte else { throw .invalidField(field: "type", reason: "a revocation starts with 0x31") }
        let version = try reader.byte("version")
        guard version == Self.version else { throw .unsupportedVersion(version) }
        let idLength = Int(try reader.byte("vehicleIDLen"))
        let vehicleID = try VehicleID(bytes: reader.bytes(idLength, "vehicleID"))
        let issuer = try KeyID(bytes: reader.bytes(KeyID.length, "issuerKeyID"))
        let issuedAt = try reader.uint32BE("issuedAt")
        let kind = try reader.byte("targetKind")
        let target = try RevocationTarget(kind: kind, value: reader.bytes(8, "target"))
        let signature = try readSignature(&reader)
        try reader.expectEnd()
        return try Revocation(vehicleID: vehicleID, issuerKeyID: issuer, issuedAt: issuedAt, target: target, signature: signature)
    }
}

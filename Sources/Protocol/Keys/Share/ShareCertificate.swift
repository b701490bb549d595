// A share certificate: an owner key's signed statement that a holder key may use this car
// with these permissions in this window. Carried in Hello.shareCertificate; docs/protocol.md
// section 18.3 gives the layout byte by byte.
//
//   0        type 0x30
//   1        version 0x01
//   2..9     serial (8, random)
//   10..74   holderPublicKey (65, SEC1 uncompressed)
//   75..82   issuerKeyID (8): the owner key that signs
//   83       vehicleIDLen L (1...32)
//   84..     vehicleID (L, printable ASCII)
//   84+L     permissions (1)
//   85+L     notBefore (UInt32 BE, 0 = no lower bound)
//   89+L     notAfter (UInt32 BE, 0xFFFFFFFF = no upper bound)
//   93+L     signature (64, raw r || s): ECDSA-SHA256 by the issuer over "OCK1-SHARE" || bytes 0..<93+L

public struct ShareCertificate: SignerNamedObject, Equatable {
    public static let typeByte: UInt8 = 0x30
    public static let version: UInt8 = 0x01
    public static let signatureLabel: Bytes = Array("OCK1-SHARE".utf8)
    /// Everything but the vehicle ID and the signature.
    public static let fixedBodyLength = 93
    public static let maxLength = fixedBodyLength + VehicleID.maxLength + Wire.rawSignatureLength

    public let serial: ShareSerial
    public let holderPublicKey: P256PublicKey
    public let issuerKeyID: KeyID
    public let vehicleID: VehicleID
    public let permissions: Permissions
    public let notBefore: UInt32
    public let notAfter: UInt32
    /// Raw r || s. Not checked here: `ShareCertificateValidator` verifies it with the enrolled
    /// issuer key.
    public let signature: Bytes

    public init(serial: ShareSerial, holderPublicKey: P256PublicKey, issuerKeyID: KeyID, vehicleID: VehicleID,
                permissions: Permissions, notBefore: UInt32, notAfter: UInt32, signature: Bytes) throws(MessageFormatError) {
        try Self.checkSignature(signature)
        self.serial = serial
        self.holderPublicKey = holderPublicKey
        self.issuerKeyID = issuerKeyID
        self.vehicleID = vehicleID
        self.permissions = permissions
        self.notBefore = notBefore
        self.notAfter = notAfter
        self.signature = signature
    }

    /// Signs a new certificate with the owner key `issuer`. Refuses what the car would refuse
    /// anyway: manage or undefined bits, no permission at all, or notBefore >= notAfter.
    public static func issue(by issuer: any ProtocolSigner, holder: P256PublicKey, vehicleID: VehicleID,
                             permissions: Permissions, notBefore: UInt32, notAfter: UInt32,
                             serial: ShareSerial) throws(KeyObjectError) -> ShareCertificate {
        guard !permissions.isEmpty, Permissions.shareable.isSuperset(of: permissions) else {
            throw .invalid(.invalidField(field: "permissions", reason: "must be a non-empty subset of unlock, lock, trunk, remote"))
        }
        guard notBefore < notAfter else {
            throw .invalid(.invalidField(field: "notAfter", reason: "must be later than notBefore"))
        }
        return try issue(by: issuer) { issuerKeyID, signature throws(MessageFormatError) in
            try ShareCertificate(serial: serial, holderPublicKey: holder, issuerKeyID: issuerKeyID, vehicleID: vehicleID,
                                 permissions: permissions, notBefore: notBefore, notAfter: notAfter, signature: signature)
        }
    }

    public var holderKeyID: KeyID { KeyID(publicKey: holderPublicKey) }
    public var signerKeyID: KeyID { issuerKeyID }
    public var provenance: ShareProvenance { ShareProvenance(serial: serial, issuer: issuerKeyID) }

    static func body(serial: ShareSerial, holder: P256PublicKey, issuerKeyID: KeyID, vehicleID: VehicleID,
                     permissions: Permissions, notBefore: UInt32, notAfter: UInt32) -> Bytes {
        var out: Bytes = [typeByte, version]
        out += serial.bytes
        out += holder.sec1
        out += issuerKeyID.bytes
        out.append(UInt8(vehicleID.bytes.count))
        out += vehicleID.bytes
        out.append(permissions.rawValue)
        out.appendBE(notBefore)
        out.appendBE(notAfter)
        return out
    }

    /// Everything before the signature.
    public var body: Bytes {
        Self.body(serial: serial, holder: holderPublicKey, issuerKeyID: issuerKeyID, vehicleID: vehicleID,
                  permissions: permissions, notBefore: notBefore, notAfter: notAfter)
    }

    /// Strict, bounded decoding (at most `maxLength` bytes are looked at).
    public static func decode(_ bytes: Bytes) throws(MessageFormatError) -> ShareCertificate {
        var reader = try ByteReader(bytes, limit: maxLength)
        let type = try reader.byte("type")
        guard type == typeByte else { throw .invalidField(field: "type", reason: "a share certificate starts with 0x30") }
        let version = try reader.byte("version")
        guard version == Self.version else { throw .unsupportedVersion(version) }
        let serial = try ShareSerial(bytes: reader.bytes(ShareSerial.length, "serial"))
        let holder = try reader.publicKey("holderPublicKey")
        let issuer = try KeyID(bytes: reader.bytes(KeyID.length, "issuerKeyID"))
        let idLength = Int(try reader.byte("vehicleIDLen"))
        let vehicleID = try VehicleID(bytes: reader.bytes(idLength, "vehicleID"))
        let permissions = Permissions(rawValue: try reader.byte("permissions"))
        let notBefore = try reader.uint32BE("notBefore")
        let notAfter = try reader.uint32BE("notAfter")
        let signature = try readSignature(&reader)
        try reader.expectEnd()
        return try ShareCertificate(serial: serial, holderPublicKey: holder, issuerKeyID: issuer, vehicleID: vehicleID,
                                    permissions: permissions, notBefore: notBefore, notAfter: notAfter, signature: signature)
    }
}

extension ByteReader {
    /// A 65-byte SEC1 point that must be on the curve.
    mutating func publicKey(_ field: String) throws(MessageFormatError) -> P256PublicKey {
        let bytes = try bytes(Wire.publicKeyLength, field)
        try checkSEC1Shape(bytes, field: field)
        guard let key = try? P256PublicKey(sec1: bytes) else {
            throw .invalidField(field: field, reason: "not a point on P-256")
        }
        return key
    }
}

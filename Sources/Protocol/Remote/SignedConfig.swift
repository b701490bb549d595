// A signed configuration document (docs/cloud.md "Configuration (desired/reported)"): what a
// fleet back end or an owner publishes retained on vehicles/{id}/config/desired. The broker is
// not trusted, so the document names the car, carries a version (rollback protection) and an
// expiry (freeze protection), and is signed by a key the car already knows.
//
//   0        type 0x43
//   1        format 0x01
//   2        vehicleIDLen L (1...32)
//   3..      vehicleID (L)
//   3+L      signerKeyID (8)
//   11+L     configVersion (UInt64 BE, >= 1; each document must be newer than the last one)
//   19+L     issuedAt (UInt32 BE, signer's wall time)
//   23+L     expiresAt (UInt32 BE; issuedAt < expiresAt <= issuedAt + 30 days)
//   27+L     payloadLen P (UInt16 BE, 2...maxPayloadLength)
//   29+L     payload (P): a JSON object, the cloud-managed part of the agent's config
//   29+L+P   signature (64, raw r || s): ECDSA-SHA256 over "OCK1-CONFIG" || bytes 0..<29+L+P
//
// The label keeps a config signature from ever doubling as another object's (protocol.md 18.11).

public struct SignedConfig: SignerNamedObject, Equatable {
    public static let typeByte: UInt8 = 0x43
    public static let format: UInt8 = 0x01
    public static let signatureLabel: Bytes = Array("OCK1-CONFIG".utf8)
    /// Bytes before the payload besides the vehicle ID.
    public static let fixedHeaderLength = 29
    /// The inbound envelope is at most 8 KiB and carries the document as hex, so a payload
    /// larger than this could never arrive; the bound also keeps a hostile length cheap.
    public static let maxPayloadLength = 3900
    public static let maxLength = fixedHeaderLength + VehicleID.maxLength + maxPayloadLength + Wire.rawSignatureLength
    /// A document valid for longer than this could be held back and replayed much later.
    public static let maxLifetimeSeconds: UInt32 = 30 * 24 * 3600

    public let vehicleID: VehicleID
    public let signerKeyID: KeyID
    public let version: UInt64
    public let issuedAt: UInt32
    public let expiresAt: UInt32
    /// The JSON bytes exactly as signed; parsed and schema-checked by the agent.
    public let payload: Bytes
    public let signature: Bytes

    public init(vehicleID: VehicleID, signerKeyID: KeyID, version: UInt64, issuedAt: UInt32, expiresAt: UInt32,
                payload: Bytes, signature: Bytes) throws(MessageFormatError) {
        guard version >= 1 else { throw .invalidField(field: "configVersion", reason: "must be at least 1") }
        guard expiresAt > issuedAt else { throw .invalidField(field: "expiresAt", reason: "must be after issuedAt") }
        guard (2...Self.maxPayloadLength).contains(payload.count) else {
            throw .invalidField(field: "payload", reason: "length must be 2...\(Self.maxPayloadLength), got \(payload.count)")
        }
        try Self.checkSignature(signature)
        self.vehicleID = vehicleID
        self.signerKeyID = signerKeyID
        self.version = version
        self.issuedAt = issuedAt
        self.expiresAt = expiresAt
        self.payload = payload
        self.signature = signature
    }

    /// Signs a document with a fleet key or an owner key.
    public static func issue(by signer: any ProtocolSigner, vehicleID: VehicleID, version: UInt64, issuedAt: UInt32,
                             expiresAt: UInt32, payload: Bytes) throws(KeyObjectError) -> SignedConfig {
        try issue(by: signer) { signerKeyID, signature throws(MessageFormatError) in
            try SignedConfig(vehicleID: vehicleID, signerKeyID: signerKeyID, version: version, issuedAt: issuedAt,
                             expiresAt: expiresAt, payload: payload, signature: signature)
        }
    }

    static func body(vehicleID: VehicleID, signerKeyID: KeyID, version: UInt64, issuedAt: UInt32, expiresAt: UInt32,
                     payload: Bytes) -> Bytes {
        var out: Bytes = [typeByte, format, UInt8(vehicleID.bytes.count)]
        out += vehicleID.bytes
        out += signerKeyID.bytes
        out.appendBE(version)
        out.appendBE(issuedAt)
        out.appendBE(expiresAt)
        out.appendBE(UInt16(payload.count))
        out += payload
        return out
    }

    /// The canonical encoding without the signature.
    public var body: Bytes {
        Self.body(vehicleID: vehicleID, signerKeyID: signerKeyID, version: version, issuedAt: issuedAt,
                  expiresAt: expiresAt, payload: payload)
    }

    /// Strict: one encoding per document, no trailing bytes, every length checked before use.
    public static func decode(_ bytes: Bytes) throws(MessageFormatError) -> SignedConfig {
        var reader = try ByteReader(bytes, limit: maxLength)
        guard try reader.byte("type") == typeByte else {
            throw .invalidField(field: "type", reason: "a configuration document starts with 0x43")
        }
        let format = try reader.byte("format")
        guard format == Self.format else { throw .unsupportedVersion(format) }
        let idLength = Int(try reader.byte("vehicleIDLen"))
        let vehicleID = try VehicleID(bytes: reader.bytes(idLength, "vehicleID"))
        let signer = try KeyID(bytes: reader.bytes(KeyID.length, "signerKeyID"))
        let version = try reader.uint64BE("configVersion")
        let issuedAt = try reader.uint32BE("issuedAt")
        let expiresAt = try reader.uint32BE("expiresAt")
        let payloadLength = Int(try reader.uint16BE("payloadLen"))
        guard payloadLength <= maxPayloadLength else {
            throw .invalidField(field: "payloadLen", reason: "at most \(maxPayloadLength)")
        }
        let payload = try reader.bytes(payloadLength, "payload")
        let signature = try readSignature(&reader)
        try reader.expectEnd()
        return try SignedConfig(vehicleID: vehicleID, signerKeyID: signer, version: version, issuedAt: issuedAt,
                                expiresAt: expiresAt, payload: payload, signature: signature)
    }
}

// A fleet key grant (docs/cloud.md "Fleet keys"): installs a fleet operator's key on one car.
// Signed by an owner key (enrollment: the owner lets a fleet act on the car), or by the car's
// current fleet key (rotation: the new key replaces the signer, which the car retires at once).
//
//   0        type 0x42
//   1        version 0x01
//   2        vehicleIDLen L (1...32)
//   3..      vehicleID (L)
//   3+L      fleetPublicKey (65, SEC1 uncompressed, on the curve)
//   68+L     issuedAt (UInt32 BE; informational)
//   72+L     issuerKeyID (8): an owner key, or the fleet key being rotated out
//   80+L     signature (64, raw r || s): ECDSA-SHA256 over "OCK1-FLEET-KEY" || bytes 0..<80+L

public struct FleetKeyGrant: SignerNamedObject, Equatable {
    public static let typeByte: UInt8 = 0x42
    public static let version: UInt8 = 0x01
    public static let signatureLabel: Bytes = Array("OCK1-FLEET-KEY".utf8)
    public static let maxLength = 80 + VehicleID.maxLength + Wire.rawSignatureLength

    public let vehicleID: VehicleID
    public let fleetKey: P256PublicKey
    public let issuedAt: UInt32
    public let issuerKeyID: KeyID
    public let signature: Bytes

    public static func == (lhs: FleetKeyGrant, rhs: FleetKeyGrant) -> Bool { lhs.encoded() == rhs.encoded() }

    public init(vehicleID: VehicleID, fleetKey: P256PublicKey, issuedAt: UInt32, issuerKeyID: KeyID,
                signature: Bytes) throws(MessageFormatError) {
        try Self.checkSignature(signature)
        self.vehicleID = vehicleID
        self.fleetKey = fleetKey
        self.issuedAt = issuedAt
        self.issuerKeyID = issuerKeyID
        self.signature = signature
    }

    public var fleetKeyID: KeyID { KeyID(publicKey: fleetKey) }
    public var signerKeyID: KeyID { issuerKeyID }

    public static func issue(by issuer: any ProtocolSigner, vehicleID: VehicleID, fleetKey: P256PublicKey,
                             issuedAt: UInt32) throws(KeyObjectError) -> FleetKeyGrant {
        try issue(by: issuer) { issuerKeyID, signature throws(MessageFormatError) in
            try FleetKeyGrant(vehicleID: vehicleID, fleetKey: fleetKey, issuedAt: issuedAt, issuerKeyID: issuerKeyID, signature: signature)
        }
    }

    static func body(vehicleID: VehicleID, fleetKey: P256PublicKey, issuedAt: UInt32, issuerKeyID: KeyID) -> Bytes {
        var out: Bytes = [typeByte, version, UInt8(vehicleID.bytes.count)]
        out += vehicleID.bytes
        out += fleetKey.sec1
        out.appendBE(issuedAt)
        out += issuerKeyID.bytes
        return out
    }

    public var body: Bytes { Self.body(vehicleID: vehicleID, fleetKey: fleetKey, issuedAt: issuedAt, issuerKeyID: issuerKeyID) }

    public static func decode(_ bytes: Bytes) throws(MessageFormatError) -> FleetKeyGrant {
        var reader = try ByteReader(bytes, limit: maxLength)
        let type = try reader.byte("type")
        guard type == typeByte else { throw .invalidField(field: "type", reason: "a fleet key grant starts with 0x42") }
        let version = try reader.byte("version")
        guard version == Self.version else { throw .unsupportedVersion(version) }
        let idLength = Int(try reader.byte("vehicleIDLen"))
        let vehicleID = try VehicleID(bytes: reader.bytes(idLength, "vehicleID"))
        let keyBytes = try reader.bytes(65, "fleetPublicKey")
        guard let key = try? P256PublicKey(sec1: keyBytes) else {
            throw .invalidField(field: "fleetPublicKey", reason: "not a P-256 point")
        }
        let issuedAt = try reader.uint32BE("issuedAt")
        let issuer = try KeyID(bytes: reader.bytes(KeyID.length, "issuerKeyID"))
        let signature = try readSignature(&reader)
        try reader.expectEnd()
        return try FleetKeyGrant(vehicleID: vehicleID, fleetKey: key, issuedAt: issuedAt, issuerKeyID: issuer, signature: signature)
    }
}

/// A grant whose signature, issuer and vehicle were checked; `rotation` when a fleet key
/// signed it (that key is to be retired).
public struct VerifiedFleetKeyGrant: Equatable, Sendable {
    public let grant: FleetKeyGrant
    public let rotation: Bool
}

public enum FleetKeyGrantValidator {
    /// 1. decodes: `malformedMessage` / `unsupportedVersion`; 2. names this car: `wrongVehicle`;
    /// 3. the new key is not revoked: `revoked`; 4. the issuer is an unrevoked owner with manage,
    /// or a current fleet signer other than the new key: otherwise `revoked` (a revoked issuer),
    /// `insufficientPermission` (a share) or `unknownKey`; 5. the signature: `badSignature`.
    public static func verify(_ bytes: Bytes, vehicleID: VehicleID, signers: any RemoteSignerDirectory,
                              isRevoked: (KeyID) -> Bool) throws(FaultCode) -> VerifiedFleetKeyGrant {
        let grant = try decoded { () throws(MessageFormatError) in try FleetKeyGrant.decode(bytes) }
        guard grant.vehicleID == vehicleID else { throw .wrongVehicle }
        guard !isRevoked(grant.fleetKeyID) else { throw .revoked }
        guard !isRevoked(grant.issuerKeyID) else { throw .revoked }
        guard let issuer = signers.remoteSigner(grant.issuerKeyID), issuer.keyID == grant.issuerKeyID else { throw .unknownKey }
        switch issuer.kind {
        case .owner: guard issuer.permissions.contains(.manage) else { throw .insufficientPermission }
        case .fleet: guard issuer.keyID != grant.fleetKeyID else { throw .insufficientPermission }
        case .share: throw .insufficientPermission
        }
        do throws(SignedObjectError) { try grant.verify(with: issuer.publicKey) } catch { throw .badSignature }
        return VerifiedFleetKeyGrant(grant: grant, rotation: issuer.kind == .fleet)
    }
}

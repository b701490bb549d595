// The owner-signed, versioned revocation list (docs/cloud.md "Revocation list"), retained on
// vehicles/{id}/revocations so a car that was offline finds the current list when it connects.
// Each entry is a complete signed revocation (docs/protocol.md 18.4) applied in order; the
// list's own signature binds the set and its version, which only moves forward on the car.
//
//   0        type 0x41
//   1        version 0x01
//   2        vehicleIDLen L (1...32)
//   3..      vehicleID (L)
//   3+L      listVersion (UInt32 BE, >= 1)
//   7+L      issuerKeyID (8): the owner key that signs
//   15+L     issuedAt (UInt32 BE; informational, like a revocation's)
//   19+L     count N (UInt16 BE, 0...maxEntries)
//   21+L     N entries: length n (1 byte, 1...120) || the signed revocation (n)
//   end      signature (64, raw r || s): ECDSA-SHA256 over "OCK1-REVOCATION-LIST" || all bytes before it

public struct RevocationList: SignerNamedObject, Equatable {
    public static let typeByte: UInt8 = 0x41
    public static let version: UInt8 = 0x01
    public static let signatureLabel: Bytes = Array("OCK1-REVOCATION-LIST".utf8)
    /// Bounded so a list always fits one 8 KiB envelope in hex.
    public static let maxEntries = 30
    public static let maxLength = 21 + VehicleID.maxLength + maxEntries * (1 + Revocation.maxLength) + Wire.rawSignatureLength

    public let vehicleID: VehicleID
    public let listVersion: UInt32
    public let issuerKeyID: KeyID
    public let issuedAt: UInt32
    /// The signed revocations, as bytes (each is checked on its own when applied).
    public let entries: [Bytes]
    public let signature: Bytes

    public init(vehicleID: VehicleID, listVersion: UInt32, issuerKeyID: KeyID, issuedAt: UInt32, entries: [Bytes],
                signature: Bytes) throws(MessageFormatError) {
        guard listVersion >= 1 else { throw .invalidField(field: "listVersion", reason: "starts at 1") }
        guard entries.count <= Self.maxEntries else { throw .invalidField(field: "count", reason: "at most \(Self.maxEntries)") }
        guard entries.allSatisfy({ (1...Revocation.maxLength).contains($0.count) }) else {
            throw .invalidField(field: "entry", reason: "1 to \(Revocation.maxLength) bytes")
        }
        try Self.checkSignature(signature)
        self.vehicleID = vehicleID
        self.listVersion = listVersion
        self.issuerKeyID = issuerKeyID
        self.issuedAt = issuedAt
        self.entries = entries
        self.signature = signature
    }

    public static func issue(by issuer: any ProtocolSigner, vehicleID: VehicleID, listVersion: UInt32, issuedAt: UInt32,
                             revocations: [Revocation]) throws(KeyObjectError) -> RevocationList {
        let entries = revocations.map { $0.encoded() }
        guard listVersion >= 1, entries.count <= maxEntries else {
            throw .invalid(.invalidField(field: "listVersion", reason: "version >= 1 and at most \(maxEntries) entries"))
        }
        return try issue(by: issuer) { issuerKeyID, signature throws(MessageFormatError) in
            try RevocationList(vehicleID: vehicleID, listVersion: listVersion, issuerKeyID: issuerKeyID, issuedAt: issuedAt,
                               entries: entries, signature: signature)
        }
    }

    public var signerKeyID: KeyID { issuerKeyID }

    static func body(vehicleID: VehicleID, listVersion: UInt32, issuerKeyID: KeyID, issuedAt: UInt32, entries: [Bytes]) -> Bytes {
        var out: Bytes = [typeByte, version, UInt8(vehicleID.bytes.count)]
        out += vehicleID.bytes
        out.appendBE(listVersion)
        out += issuerKeyID.bytes
        out.appendBE(issuedAt)
        out.appendBE(UInt16(entries.count))
        for entry in entries {
            out.append(UInt8(entry.count))
            out += entry
        }
        return out
    }

    public var body: Bytes {
        Self.body(vehicleID: vehicleID, listVersion: listVersion, issuerKeyID: issuerKeyID, issuedAt: issuedAt, entries: entries)
    }

    public static func decode(_ bytes: Bytes) throws(MessageFormatError) -> RevocationList {
        var reader = try ByteReader(bytes, limit: maxLength)
        let type = try reader.byte("type")
        guard type == typeByte else { throw .invalidField(field: "type", reason: "a revocation list starts with 0x41") }
        let version = try reader.byte("version")
        guard version == Self.version else { throw .unsupportedVersion(version) }
        let idLength = Int(try reader.byte("vehicleIDLen"))
        let vehicleID = try VehicleID(bytes: reader.bytes(idLength, "vehicleID"))
        let listVersion = try reader.uint32BE("listVersion")
        let issuer = try KeyID(bytes: reader.bytes(KeyID.length, "issuerKeyID"))
        let issuedAt = try reader.uint32BE("issuedAt")
        let count = Int(try reader.uint16BE("count"))
        guard count <= maxEntries else { throw .invalidField(field: "count", reason: "at most \(maxEntries)") }
        var entries: [Bytes] = []
        for _ in 0..<count {
            let length = Int(try reader.byte("entryLength"))
            entries.append(try reader.bytes(length, "entry"))
        }
        let signature = try readSignature(&reader)
        try reader.expectEnd()
        return try RevocationList(vehicleID: vehicleID, listVersion: listVersion, issuerKeyID: issuer, issuedAt: issuedAt,
                                  entries: entries, signature: signature)
    }
}

/// A list whose signature, issuer and vehicle were checked (the version is the agent's check,
/// against its persisted one; each entry is verified again as it is applied).
public struct VerifiedRevocationList: Equatable, Sendable {
    public let list: RevocationList
}

public enum RevocationListValidator {
    /// 1. decodes: `malformedMessage` / `unsupportedVersion`; 2. names this car: `wrongVehicle`;
    /// 3. signed by an enrolled, unrevoked owner key with manage: otherwise `invalidRevocation`.
    public static func verify(_ bytes: Bytes, vehicleID: VehicleID, keys: any KeyDirectory) throws(FaultCode) -> VerifiedRevocationList {
        let list = try decoded { () throws(MessageFormatError) in try RevocationList.decode(bytes) }
        guard list.vehicleID == vehicleID else { throw .wrongVehicle }
        guard let issuer = keys.lookup(list.issuerKeyID), issuer.keyID == list.issuerKeyID, issuer.role == .owner,
              !issuer.revoked, issuer.permissions.contains(.manage) else {
            throw .invalidRevocation
        }
        do throws(SignedObjectError) { try list.verify(with: issuer.publicKey) } catch { throw .invalidRevocation }
        return VerifiedRevocationList(list: list)
    }
}

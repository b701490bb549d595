// A signed remote command (docs/cloud.md "Remote commands"): what an owner or fleet back end
// sends on vehicles/{id}/cmd. The broker is not trusted, so the object itself names the car,
// carries its own lifetime and a UUID the car remembers, and is signed by a key the car knows.
//
//   0        type 0x40
//   1        version 0x01
//   2..17    commandID (16 bytes, a UUID)
//   18       vehicleIDLen L (1...32)
//   19..     vehicleID (L)
//   19+L     action (1: lock, 2: unlock, 3: trunk, 4: status, 5: report)
//   20+L     issuedAt (UInt32 BE, signer's wall time)
//   24+L     expiresAt (UInt32 BE; issuedAt < expiresAt <= issuedAt + 60)
//   28+L     signerKeyID (8)
//   36+L     signature (64, raw r || s): ECDSA-SHA256 over "OCK1-REMOTE-COMMAND" || bytes 0..<36+L
//
// The signed input is 55 + L bytes and starts with its own label, so it can never double as an
// AuthResponse signature or any other object's (docs/protocol.md 18.11).

public enum RemoteAction: UInt8, Sendable, CaseIterable, CustomStringConvertible {
    case lock = 1
    case unlock = 2
    case trunk = 3
    case status = 4
    /// Locate-style "report now": the car answers with its state (and queues a state report).
    case report = 5

    public var description: String {
        switch self {
        case .lock: return "lock"
        case .unlock: return "unlock"
        case .trunk: return "trunk"
        case .status: return "status"
        case .report: return "report"
        }
    }

    public init?(name: String) {
        guard let match = Self.allCases.first(where: { $0.description == name }) else { return nil }
        self = match
    }

    /// The key permission the action needs besides `remote`.
    public var requiredPermission: Permissions {
        switch self {
        case .lock: return .lock
        case .unlock: return .unlock
        case .trunk: return .trunk
        case .status, .report: return []
        }
    }

    /// True for the actions that pulse an actuator.
    public var moves: Bool { requiredPermission != [] }
}

public struct RemoteCommand: SignerNamedObject, Equatable {
    public static let typeByte: UInt8 = 0x40
    public static let version: UInt8 = 0x01
    public static let signatureLabel: Bytes = Array("OCK1-REMOTE-COMMAND".utf8)
    public static let idLength = 16
    public static let fixedBodyLength = 36
    public static let maxLength = fixedBodyLength + VehicleID.maxLength + Wire.rawSignatureLength
    /// Longest lifetime a signer may give a command (expiresAt - issuedAt).
    public static let maxLifetimeSeconds: UInt32 = 60
    public static let defaultLifetimeSeconds: UInt32 = 30

    public let commandID: Bytes
    public let vehicleID: VehicleID
    public let action: RemoteAction
    public let issuedAt: UInt32
    public let expiresAt: UInt32
    public let signerKeyID: KeyID
    public let signature: Bytes

    public init(commandID: Bytes, vehicleID: VehicleID, action: RemoteAction, issuedAt: UInt32, expiresAt: UInt32,
                signerKeyID: KeyID, signature: Bytes) throws(MessageFormatError) {
        guard commandID.count == Self.idLength else { throw .invalidField(field: "commandID", reason: "must be 16 bytes") }
        try Self.checkSignature(signature)
        self.commandID = commandID
        self.vehicleID = vehicleID
        self.action = action
        self.issuedAt = issuedAt
        self.expiresAt = expiresAt
        self.signerKeyID = signerKeyID
        self.signature = signature
    }

    /// Signs a new command. The lifetime is checked here too, so a tool cannot make one the
    /// car would refuse for its length.
    public static func issue(by signer: any ProtocolSigner, commandID: Bytes, vehicleID: VehicleID, action: RemoteAction,
                             issuedAt: UInt32, lifetimeSeconds: UInt32 = defaultLifetimeSeconds) throws(KeyObjectError) -> RemoteCommand {
        guard lifetimeSeconds >= 1, lifetimeSeconds <= maxLifetimeSeconds, issuedAt <= UInt32.max - lifetimeSeconds else {
            throw .invalid(.invalidField(field: "expiresAt", reason: "lifetime must be 1 to \(maxLifetimeSeconds) s"))
        }
        guard commandID.count == idLength else { throw .invalid(.invalidField(field: "commandID", reason: "must be 16 bytes")) }
        return try issue(by: signer) { signerKeyID, signature throws(MessageFormatError) in
            try RemoteCommand(commandID: commandID, vehicleID: vehicleID, action: action, issuedAt: issuedAt,
                              expiresAt: issuedAt + lifetimeSeconds, signerKeyID: signerKeyID, signature: signature)
        }
    }

    static func body(commandID: Bytes, vehicleID: VehicleID, action: RemoteAction, issuedAt: UInt32, expiresAt: UInt32,
                     signerKeyID: KeyID) -> Bytes {
        var out: Bytes = [typeByte, version]
        out += commandID
        out.append(UInt8(vehicleID.bytes.count))
        out += vehicleID.bytes
        out.append(action.rawValue)
        out.appendBE(issuedAt)
        out.appendBE(expiresAt)
        out += signerKeyID.bytes
        return out
    }

    public var body: Bytes {
        Self.body(commandID: commandID, vehicleID: vehicleID, action: action, issuedAt: issuedAt, expiresAt: expiresAt,
                  signerKeyID: signerKeyID)
    }

    /// The command ID as a lower-case 8-4-4-4-12 UUID string (what results and events name).
    public var uuidString: String { Self.uuidString(commandID) }

    public static func uuidString(_ bytes: Bytes) -> String {
        let hex = bytes.hexString
        var out = ""
        for (index, character) in hex.enumerated() {
            if [8, 12, 16, 20].contains(index) { out.append("-") }
            out.append(character)
        }
        return out
    }

    /// Strict: exact length, known action, no trailing bytes.
    public static func decode(_ bytes: Bytes) throws(MessageFormatError) -> RemoteCommand {
        var reader = try ByteReader(bytes, limit: maxLength)
        let type = try reader.byte("type")
        guard type == typeByte else { throw .invalidField(field: "type", reason: "a remote command starts with 0x40") }
        let version = try reader.byte("version")
        guard version == Self.version else { throw .unsupportedVersion(version) }
        let commandID = try reader.bytes(idLength, "commandID")
        let idLength = Int(try reader.byte("vehicleIDLen"))
        let vehicleID = try VehicleID(bytes: reader.bytes(idLength, "vehicleID"))
        let actionByte = try reader.byte("action")
        guard let action = RemoteAction(rawValue: actionByte) else {
            throw .invalidField(field: "action", reason: "unknown action \(actionByte)")
        }
        let issuedAt = try reader.uint32BE("issuedAt")
        let expiresAt = try reader.uint32BE("expiresAt")
        let signer = try KeyID(bytes: reader.bytes(KeyID.length, "signerKeyID"))
        let signature = try readSignature(&reader)
        try reader.expectEnd()
        return try RemoteCommand(commandID: commandID, vehicleID: vehicleID, action: action, issuedAt: issuedAt,
                                 expiresAt: expiresAt, signerKeyID: signer, signature: signature)
    }
}

// The stable fault numbers of protocol v1. Numbers are part of the wire format: never renumber,
// never reuse a retired number; add new faults at the end.

/// Why the car refused something. Sent as a 2-byte big-endian code in a cleartext Fault (before a
/// session exists) or in the `result` field of an encrypted Response (inside a session).
public enum FaultCode: UInt16, Sendable, CaseIterable, CustomStringConvertible {
    case unknownKey = 1
    case revoked = 2
    case expired = 3
    case notYetValid = 4
    case insufficientPermission = 5
    case badSignature = 6
    case unknownChallenge = 7
    case reusedChallenge = 8
    case challengeExpired = 9
    case staleTimestamp = 10
    case replayedCounter = 11
    case outOfOrderCounter = 12
    case expiredCommand = 13
    case wrongVehicle = 14
    case clockNotTrusted = 15
    case busy = 16
    case rateLimited = 17
    case malformedMessage = 18
    case unsupportedVersion = 19
    case lifetimeTooLong = 20
    case keychainFull = 21
    case decryptionFailed = 22
    case unexpectedMessage = 23
    case sessionExpired = 24
    case invalidCertificate = 25
    case actuationFailed = 26
    case internalError = 27
    case invalidRevocation = 28
    case lastOwnerKey = 29
    case pairingClosed = 30
    case wrongPairingCode = 31
    /// UWB ranging (docs/protocol.md section 19). Never sent by the engine itself: the agent's
    /// proximity policy refuses unlock and trunk with it through `complete(_:result:...)`.
    case notInProximity = 32
    case rangingFailed = 33
    case rangingUnsupported = 34
    /// A PairingHello of an older pairing version (the code MAC before SPAKE2+).
    case pairingVersion = 35

    /// The stable name used in logs, audit records and the CLI (`carkey phone` prints it).
    public var name: String {
        switch self {
        case .unknownKey: return "unknownKey"
        case .revoked: return "revoked"
        case .expired: return "expired"
        case .notYetValid: return "notYetValid"
        case .insufficientPermission: return "insufficientPermission"
        case .badSignature: return "badSignature"
        case .unknownChallenge: return "unknownChallenge"
        case .reusedChallenge: return "reusedChallenge"
        case .challengeExpired: return "challengeExpired"
        case .staleTimestamp: return "staleTimestamp"
        case .replayedCounter: return "replayedCounter"
        case .outOfOrderCounter: return "outOfOrderCounter"
        case .expiredCommand: return "expiredCommand"
        case .wrongVehicle: return "wrongVehicle"
        case .clockNotTrusted: return "clockNotTrusted"
        case .busy: return "busy"
        case .rateLimited: return "rateLimited"
        case .malformedMessage: return "malformedMessage"
        case .unsupportedVersion: return "unsupportedVersion"
        case .lifetimeTooLong: return "lifetimeTooLong"
        case .keychainFull: return "keychainFull"
        case .decryptionFailed: return "decryptionFailed"
        case .unexpectedMessage: return "unexpectedMessage"
        case .sessionExpired: return "sessionExpired"
        case .invalidCertificate: return "invalidCertificate"
        case .actuationFailed: return "actuationFailed"
        case .internalError: return "internalError"
        case .invalidRevocation: return "invalidRevocation"
        case .lastOwnerKey: return "lastOwnerKey"
        case .pairingClosed: return "pairingClosed"
        case .wrongPairingCode: return "wrongPairingCode"
        case .notInProximity: return "notInProximity"
        case .rangingFailed: return "rangingFailed"
        case .rangingUnsupported: return "rangingUnsupported"
        case .pairingVersion: return "pairingVersion"
        }
    }

    public var description: String { "\(name) (\(rawValue))" }

    /// Looks a fault up by its stable name (CLI arguments, JSON).
    public init?(name: String) {
        guard let match = FaultCode.allCases.first(where: { $0.name == name }) else { return nil }
        self = match
    }
}

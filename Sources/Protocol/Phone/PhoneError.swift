// Why the phone refused what it received (or cannot send). Nothing here is sent to the car.

public enum PhoneError: Error, Equatable, Sendable, CustomStringConvertible {
    case malformed(MessageFormatError)
    /// A valid message that does not fit the current state.
    case unexpectedMessage(String)
    /// The Challenge names another vehicle.
    case wrongVehicle(String)
    /// The Challenge signature does not verify over our own Hello under the pinned car key:
    /// another car, or a relay that changed the Hello (for example swapped the ephemeral key).
    case carSignatureInvalid
    case invalidCarEphemeralKey
    case decryptionFailed
    case replayedCounter
    case outOfOrderCounter
    /// `command` before a session is established, or after it ended.
    case notEstablished
    /// One command at a time: wait for the Response.
    case commandPending
    /// Counters exhausted: handshake again.
    case sessionExhausted
    case signingFailed
    case keyGenerationFailed
    /// PairingResult said success but its car MAC is wrong: the car did not prove it knows the
    /// code (a relay or impostor). Do not pin its identity key.
    case pairingNotConfirmed
    /// The AdvertisingKeyGrant does not open under ECDH(phone key, pinned car identity) and
    /// this enrollment's challenge: altered, or not made by the car for this phone.
    case advertisingKeyGrantInvalid
    /// The phone key cannot do ECDH, so it cannot receive the advertising key.
    case keyAgreementUnavailable

    public var description: String {
        switch self {
        case .malformed(let error): return "malformed message: \(error)"
        case .unexpectedMessage(let what): return "unexpected message: \(what)"
        case .wrongVehicle(let id): return "challenge is from vehicle \"\(id)\", not the expected one"
        case .carSignatureInvalid: return "car signature does not verify over our Hello (wrong car or relay tampering)"
        case .invalidCarEphemeralKey: return "car ephemeral key is not a valid P-256 point"
        case .decryptionFailed: return "encrypted message failed authentication"
        case .replayedCounter: return "car reused a counter"
        case .outOfOrderCounter: return "car counter went backwards"
        case .notEstablished: return "no session established"
        case .commandPending: return "a command is still waiting for its response"
        case .sessionExhausted: return "session counters exhausted; handshake again"
        case .signingFailed: return "the phone key could not sign"
        case .keyGenerationFailed: return "could not generate an ephemeral key"
        case .pairingNotConfirmed: return "the car did not prove it knows the pairing code; do not trust it"
        case .advertisingKeyGrantInvalid: return "the advertising key grant does not authenticate for this car and phone key"
        case .keyAgreementUnavailable: return "the phone key cannot do ECDH to receive the advertising key"
        }
    }

    static func from(_ fault: FaultCode) -> PhoneError {
        switch fault {
        case .replayedCounter: return .replayedCounter
        case .outOfOrderCounter: return .outOfOrderCounter
        case .sessionExpired: return .sessionExhausted
        default: return .decryptionFailed
        }
    }
}

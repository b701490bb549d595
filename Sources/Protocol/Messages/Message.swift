// Dispatch on the first byte: one entry point that turns any received bytes into a typed
// message or a typed error, used by both state machines and the field decoder.

public enum Message: Equatable, Sendable {
    case hello(HelloMessage)
    case challenge(ChallengeMessage)
    case authResponse(AuthResponseMessage)
    case encrypted(EncryptedRecord)
    case fault(FaultMessage)
    case pairingHello(PairingHelloMessage)
    case pairingChallenge(PairingChallengeMessage)
    case pairingProof(PairingProofMessage)
    case pairingResult(PairingResultMessage)
    case advertisingKeyGrant(AdvertisingKeyGrantMessage)

    public static func decode(_ bytes: Bytes) throws(MessageFormatError) -> Message {
        guard let first = bytes.first else { throw .empty }
        guard bytes.count <= Wire.maxMessageLength else {
            throw .oversized(length: bytes.count, limit: Wire.maxMessageLength)
        }
        guard let type = MessageType(rawValue: first) else { throw .unknownMessageType(first) }
        switch type {
        case .hello: return .hello(try HelloMessage.decode(bytes))
        case .challenge: return .challenge(try ChallengeMessage.decode(bytes))
        case .authResponse: return .authResponse(try AuthResponseMessage.decode(bytes))
        case .sessionAccepted, .command, .response: return .encrypted(try EncryptedRecord.decode(bytes))
        case .fault: return .fault(try FaultMessage.decode(bytes))
        case .pairingHello: return .pairingHello(try PairingHelloMessage.decode(bytes))
        case .pairingChallenge: return .pairingChallenge(try PairingChallengeMessage.decode(bytes))
        case .pairingProof: return .pairingProof(try PairingProofMessage.decode(bytes))
        case .pairingResult: return .pairingResult(try PairingResultMessage.decode(bytes))
        case .advertisingKeyGrant: return .advertisingKeyGrant(try AdvertisingKeyGrantMessage.decode(bytes))
        }
    }

    public func encoded() -> Bytes {
        switch self {
        case .hello(let m): return m.encoded()
        case .challenge(let m): return m.encoded()
        case .authResponse(let m): return m.encoded()
        case .encrypted(let m): return m.encoded()
        case .fault(let m): return m.encoded()
        case .pairingHello(let m): return m.encoded()
        case .pairingChallenge(let m): return m.encoded()
        case .pairingProof(let m): return m.encoded()
        case .pairingResult(let m): return m.encoded()
        case .advertisingKeyGrant(let m): return m.encoded()
        }
    }
}

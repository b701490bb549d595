// Protocol messages: the dispatcher and every type's strict decoder, reached through their
// public decode entry points only (pairing formats are changing; Message.decode keeps compiling).
import Protocol

enum MessageTargets {
    static let all: [FuzzTarget] = [
        FuzzTarget("message", "Message.decode: accepted => <= Wire.maxMessageLength, canonical re-encode, decode(encode(x)) == x, type byte preserved; MessageDecoder.describe never empty") { bytes throws(PropertyViolation) in
            let accepted = try Strict.roundTrip(bytes, maxLength: Wire.maxMessageLength, closedTail: false,
                                                decode: Message.decode, encode: { $0.encoded() })
            if accepted { try require(Message.typeByte(try! Message.decode(bytes)) == bytes[0], "type byte preserved") }
            try require(!MessageDecoder.describe(bytes).isEmpty, "describe non-empty")
            return accepted
        },
        strict("hello", HelloMessage.decode, { $0.encoded() }, closedTail: false),
        strict("challenge", ChallengeMessage.decode, { $0.encoded() }),
        strict("auth-response", AuthResponseMessage.decode, { $0.encoded() }, closedTail: false), // signature length varies (raw 64 or DER 8...72)
        strict("fault", FaultMessage.decode, { $0.encoded() }),
        strict("encrypted-record", EncryptedRecord.decode, { $0.encoded() }, closedTail: false),
        // Pairing messages and the advertising-key grant: through the dispatcher, so the
        // target compiles while their formats change; first byte forced to the type.
        typed("pairing-hello", .pairingHello),
        typed("pairing-challenge", .pairingChallenge),
        typed("pairing-proof", .pairingProof),
        typed("pairing-result", .pairingResult),
        typed("advertising-key-grant", .advertisingKeyGrant),
    ]

    static func strict<T: Equatable>(_ name: String, _ decode: @escaping @Sendable (Bytes) throws -> T,
                                     _ encode: @escaping @Sendable (T) -> Bytes, closedTail: Bool = true) -> FuzzTarget {
        FuzzTarget(name, "\(name) strict decoder: accepted => <= \(Wire.maxMessageLength) bytes, canonical, decode(encode(x)) == x, Message.decode agrees\(closedTail ? ", trailing/truncated refused" : "")") { bytes throws(PropertyViolation) in
            let accepted = try Strict.roundTrip(bytes, maxLength: Wire.maxMessageLength, closedTail: closedTail,
                                                decode: decode, encode: encode)
            if accepted { try require((try? Message.decode(bytes)) != nil, "Message.decode accepts what \(name) accepts") }
            return accepted
        }
    }

    /// The input with its first byte replaced by `type`, through Message.decode.
    static func typed(_ name: String, _ type: MessageType) -> FuzzTarget {
        FuzzTarget(name, "\(name) via Message.decode (type byte forced): canonical, decode(encode(x)) == x, <= \(Wire.maxMessageLength) bytes") { raw throws(PropertyViolation) in
            var bytes = raw
            if bytes.isEmpty { bytes = [type.rawValue] } else { bytes[0] = type.rawValue }
            let accepted = try Strict.roundTrip(bytes, maxLength: Wire.maxMessageLength, closedTail: false,
                                                decode: Message.decode, encode: { $0.encoded() })
            if accepted { try require(Message.typeByte(try! Message.decode(bytes)) == type.rawValue, "decoded as \(type)") }
            return accepted
        }
    }
}

extension Message {
    static func typeByte(_ message: Message) -> UInt8 { message.encoded().first ?? 0 }
}

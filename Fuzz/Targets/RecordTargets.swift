// Encrypted records under a fixed session: the key and counters are derived deterministically,
// so a record the fuzzer builds decrypts and reaches the command/response/session decoders.
import Protocol

enum FixedSession {
    /// phone -> car key: SHA-256 of a label, fixed so inputs replay identically.
    static let phoneToCar: Bytes = SHA256.hash(Array("carkey-fuzz/fixed-session/phone-to-car".utf8))
    static let counter: UInt64 = 1

    static func seal(_ type: MessageType, counter: UInt64, _ plaintext: Bytes) -> Bytes? {
        let header = EncryptedRecord.header(type: type, counter: counter)
        guard let sealed = try? AESGCM.seal(plaintext, key: phoneToCar, nonce: RecordNonce.make(direction: .phoneToCar, counter: counter),
                                            authenticating: header) else { return nil }
        return header + sealed.ciphertext + sealed.tag
    }

    static func open(_ record: EncryptedRecord) -> Bytes? {
        try? AESGCM.open(ciphertext: record.ciphertext, tag: record.tag, key: phoneToCar,
                         nonce: RecordNonce.make(direction: .phoneToCar, counter: record.counter), authenticating: record.header)
    }
}

enum RecordTargets {
    static let all: [FuzzTarget] = [
        FuzzTarget("session-plaintext", "plaintext sealed under the fixed session -> Message.decode -> open -> Command/Response (or rangingCapabilities answer)/SessionAccepted decoders: open(seal(p)) == p, one flipped bit refused, each body canonical and decode(encode(x)) == x") { input throws(PropertyViolation) in
            // Byte 0 picks the record type, the rest is the plaintext.
            guard let selector = input.first else { return false }
            let types: [MessageType] = [.command, .response, .sessionAccepted]
            let type = types[Int(selector) % types.count]
            let plaintext = Array(input.dropFirst())
            guard let record = FixedSession.seal(type, counter: FixedSession.counter, plaintext) else { return false }
            guard case .encrypted(let decoded)? = try? Message.decode(record) else {
                try require(record.count > Wire.maxMessageLength, "a sealed record within the limit decodes")
                return false
            }
            try require(decoded.encoded() == record, "record re-encodes")
            try require(FixedSession.open(decoded) == plaintext, "open(seal(p)) == p")
            var forged = record
            forged[forged.count - 1 - Int(selector) % min(forged.count, 16)] ^= 0x01
            if let f = try? EncryptedRecord.decode(forged) { try require(FixedSession.open(f) == nil, "tampered tag refused") }
            switch type {
            case .command:
                return try Strict.roundTrip(plaintext, maxLength: CommandBody.fixedLength + 255, decode: CommandBody.decode, encode: { $0.encoded() })
            case .response:
                // A Response, or the one longer Response: the ok answer to rangingCapabilities.
                let response = try Strict.roundTrip(plaintext, maxLength: Wire.maxMessageLength, decode: ResponseBody.decode, encode: { $0.encoded() })
                let answer = try Strict.roundTrip(plaintext, maxLength: RangingCapabilitiesAnswer.length, decode: RangingCapabilitiesAnswer.decode,
                                                  encode: { $0.encoded() })
                try require(!(response && answer), "a plaintext is a Response or a capabilities answer, not both")
                return response || answer
            default:
                return try Strict.roundTrip(plaintext, maxLength: Wire.maxMessageLength, decode: SessionAcceptedBody.decode, encode: { $0.encoded() })
            }
        },
        FuzzTarget("session-record", "raw record bytes opened under the fixed session: a record that decodes re-encodes; one that opens reaches CommandBody.decode (canonical)") { input throws(PropertyViolation) in
            guard let record = try? EncryptedRecord.decode(input) else { return false }
            try require(record.encoded() == input, "record re-encodes")
            if let plaintext = FixedSession.open(record), let body = try? CommandBody.decode(plaintext) {
                try require(body.encoded() == plaintext, "command body canonical")
            }
            return true
        },
    ]
}

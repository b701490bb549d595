// Field diagnostics (`carkey decode HEX`): any message as readable lines. Encrypted messages
// show their header only; nothing here needs or touches a key.

public enum MessageDecoder {
    /// Hex input as the field tools take it.
    public enum HexInput: Equatable, Sendable {
        case bytes(Bytes)
        /// An odd number of digits or a character that is not a hex digit.
        case notHex
        /// Valid-looking but longer than any message; not converted (the parse stays bounded).
        case longerThanAMessage
    }

    /// One line per field, or the decoding error naming the offending field.
    public static func fieldLines(_ bytes: Bytes) throws(MessageFormatError) -> [String] {
        lines(for: try Message.decode(bytes), length: bytes.count)
    }

    /// The fields, or the error line `invalid message (N bytes): ... [fault NAME]`.
    public static func describe(_ bytes: Bytes) -> String {
        do throws(MessageFormatError) {
            return try fieldLines(bytes).joined(separator: "\n")
        } catch {
            return errorLine(error, length: bytes.count)
        }
    }

    public static func errorLine(_ error: MessageFormatError, length: Int) -> String {
        "invalid message (\(length) bytes): \(error) [fault \(error.fault.name)]"
    }

    /// Parses hex; whitespace, colons and a leading 0x are tolerated.
    public static func parseHex(_ hex: String) -> HexInput {
        var text = hex.filter { !$0.isWhitespace && $0 != ":" }
        if text.hasPrefix("0x") || text.hasPrefix("0X") { text.removeFirst(2) }
        guard text.utf8.count <= Wire.maxMessageLength * 2 else {
            let digits = text.utf8.allSatisfy { (48...57).contains($0) || (65...70).contains($0) || (97...102).contains($0) }
            return digits && text.utf8.count % 2 == 0 ? .longerThanAMessage : .notHex
        }
        guard let bytes = Bytes(hex: text) else { return .notHex }
        return .bytes(bytes)
    }

    /// Parses hex and describes it.
    public static func describe(hex: String) -> String {
        switch parseHex(hex) {
        case .bytes(let bytes): return describe(bytes)
        case .notHex: return "invalid hex: odd length or a non-hex character"
        case .longerThanAMessage: return "invalid hex: longer than \(Wire.maxMessageLength) bytes"
        }
    }

    static func lines(for message: Message, length: Int) -> [String] {
        switch message {
        case .hello(let m):
            return ["Hello (phone -> car), \(length) bytes, version 1",
                    "  keyID:              \(m.keyID)",
                    "  phoneEphemeralPub:  \(m.ephemeralPublicKey.hexString)",
                    "  shareCertificate:   \(m.shareCertificate.isEmpty ? "none" : "\(m.shareCertificate.count) bytes \(m.shareCertificate.hexString)")"]
        case .challenge(let m):
            return ["Challenge (car -> phone), \(length) bytes, version 1",
                    "  challenge:          \(m.challenge.hexString)",
                    "  carEphemeralPub:    \(m.carEphemeralPublicKey.hexString)",
                    "  vehicleID:          \"\(m.vehicleID)\"",
                    "  carSignature (raw): \(m.signature.hexString)"]
        case .authResponse(let m):
            return ["AuthResponse (phone -> car), \(length) bytes, version 1",
                    "  challenge:          \(m.challenge.hexString)",
                    "  timestamp:          \(m.timestamp) (little-endian, seconds since 1970)",
                    "  signature (\(m.signatureEncoding.rawValue)): \(m.signature.hexString)"]
        case .encrypted(let m):
            return ["\(name(of: m.type)) (encrypted), \(length) bytes, version 1",
                    "  counter:            \(m.counter)",
                    "  ciphertext:         \(m.ciphertext.count) bytes",
                    "  tag:                \(m.tag.hexString)",
                    "  (contents need the session key)"]
        case .fault(let m):
            let name = m.fault.map { "\($0.name): \($0.remediation)" } ?? "unknown fault code"
            return ["Fault (car -> phone, cleartext), \(length) bytes, version 1",
                    "  code:               \(m.code) \(name)"]
        case .pairingHello(let m):
            return ["PairingHello (phone -> car), \(length) bytes, version \(m.version)" + (m.isLegacy ? " (pre-SPAKE2+ pairing)" : ""),
                    "  phonePublicKey:     \(m.phonePublicKey.hexString)"]
                + (m.isLegacy ? [] : ["  shareP:             \(m.shareP.hexString)"])
                + refusalLines(m.refusalOnSight)
        case .pairingChallenge(let m):
            return ["PairingChallenge (car -> phone), \(length) bytes, version 2",
                    "  challenge:          \(m.challenge.hexString)",
                    "  windowID:           \(m.windowID.hexString)",
                    "  carIdentityPub:     \(m.carIdentityPublicKey.hexString)",
                    "  vehicleID:          \"\(m.vehicleID)\"",
                    "  shareV:             \(m.shareV.hexString)",
                    "  confirmV:           \(m.confirmV.hexString)",
                    "  carSignature (raw): \(m.signature.hexString)"]
        case .pairingProof(let m):
            return ["PairingProof (phone -> car), \(length) bytes, version 2",
                    "  confirmP:           \(m.confirmP.hexString)",
                    "  signature (raw):    \(m.signature.hexString)"]
        case .pairingResult(let m):
            let outcome = m.isSuccess ? "0 enrolled" : "\(m.result) \(m.fault?.name ?? "unknown fault code")"
            return ["PairingResult (car -> phone), \(length) bytes, version 2",
                    "  result:             \(outcome)",
                    "  carMAC:             \(m.carMAC.hexString)"]
        case .advertisingKeyGrant(let m):
            return ["AdvertisingKeyGrant (car -> phone, encrypted), \(length) bytes, version 1",
                    "  ciphertext:         \(m.ciphertext.count) bytes",
                    "  tag:                \(m.tag.hexString)",
                    "  (contents need the enrolled phone key)"]
        }
    }

    /// A message that decodes but that the car refuses on sight, whatever its state: the Fault
    /// it sends back, as the Fault message's own line shows it.
    static func refusalLines(_ fault: FaultCode?) -> [String] {
        guard let fault else { return [] }
        return ["  refused by the car: Fault \(fault.rawValue) \(fault.name): \(fault.remediation)"]
    }

    static func name(of type: MessageType) -> String {
        switch type {
        case .hello: return "Hello"
        case .challenge: return "Challenge"
        case .sessionAccepted: return "SessionAccepted (car -> phone)"
        case .command: return "Command (phone -> car)"
        case .response: return "Response (car -> phone)"
        case .fault: return "Fault"
        case .authResponse: return "AuthResponse"
        case .pairingHello: return "PairingHello"
        case .pairingChallenge: return "PairingChallenge"
        case .pairingProof: return "PairingProof"
        case .pairingResult: return "PairingResult"
        case .advertisingKeyGrant: return "AdvertisingKeyGrant"
        }
    }
}

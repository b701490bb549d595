// AuthResponse, phone to car, in exactly the frame the existing phone app sends:
//
//   0..1     header 0xAA 0xBB
//   2        version 0x01
//   3..34    challenge (32)
//   35..38   timestamp (UInt32 LITTLE-endian, seconds since 1970; fixed by the app)
//   39..     signature: ECDSA-SHA256 by the phone's long-term key over challenge || timestamp(LE)
//            64 bytes = raw r || s; any other length (8...72) = strict DER (X9.62)

public struct AuthResponseMessage: Equatable, Sendable {
    public static let header: Bytes = [0xAA, 0xBB]
    /// Everything before the signature.
    public static let fixedLength = 39

    public let challenge: Bytes
    public let timestamp: UInt32
    public let signature: Bytes

    public init(challenge: Bytes, timestamp: UInt32, signature: Bytes) throws(MessageFormatError) {
        guard challenge.count == Wire.challengeLength else {
            throw .invalidField(field: "challenge", reason: "must be \(Wire.challengeLength) bytes")
        }
        let length = signature.count
        guard length == Wire.rawSignatureLength
            || (Wire.minDERSignatureLength...Wire.maxDERSignatureLength).contains(length) else {
            throw .invalidField(field: "signature", reason: "\(length) bytes is neither raw (64) nor DER (8...72)")
        }
        self.challenge = challenge
        self.timestamp = timestamp
        self.signature = signature
    }

    /// The length decides the encoding: the frame has no encoding flag. A DER signature that
    /// happens to be exactly 64 bytes (probability about 2^-48) is read as raw and fails to
    /// verify; phones re-sign in that case (docs/protocol.md).
    public var signatureEncoding: SignatureEncoding {
        signature.count == Wire.rawSignatureLength ? .raw : .der
    }

    /// The bytes the phone signs: challenge || timestamp (4 bytes little-endian).
    public static func signedData(challenge: Bytes, timestamp: UInt32) -> Bytes {
        var out = challenge
        out.appendLE(timestamp)
        return out
    }

    public var signedData: Bytes { AuthResponseMessage.signedData(challenge: challenge, timestamp: timestamp) }

    public func encoded() -> Bytes {
        var out = AuthResponseMessage.header
        out.append(Wire.version)
        out += challenge
        out.appendLE(timestamp)
        out += signature
        return out
    }

    public static func decode(_ bytes: Bytes) throws(MessageFormatError) -> AuthResponseMessage {
        var reader = try ByteReader(bytes)
        let first = try reader.byte("header")
        guard first == header[0] else { throw .unknownMessageType(first) }
        guard try reader.byte("header") == header[1] else {
            throw .invalidField(field: "header", reason: "AuthResponse must start AA BB")
        }
        try reader.version()
        let challenge = try reader.bytes(Wire.challengeLength, "challenge")
        let timestamp = try reader.uint32LE("timestamp")
        let signature = reader.rest()
        return try AuthResponseMessage(challenge: challenge, timestamp: timestamp, signature: signature)
    }
}

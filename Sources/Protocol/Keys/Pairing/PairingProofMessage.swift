// PairingProof, phone to car: knowledge of the code and possession of the phone key.
//
//   0        type 0x22
//   1        version 0x01
//   2..33    codeMAC (32): HMAC-SHA256(code, "OCK1-PAIR-PHONE" || phonePub || carPub || challenge)
//   34..97   signature (64, raw r || s) by the phone key over
//            "OCK1-PAIR-PROOF" || phonePub || carPub || challenge

public struct PairingProofMessage: Equatable, Sendable {
    public static let length = 98
    public let codeMAC: Bytes
    public let signature: Bytes

    public init(codeMAC: Bytes, signature: Bytes) throws(MessageFormatError) {
        guard codeMAC.count == HMACSHA256.byteCount else { throw .invalidField(field: "codeMAC", reason: "must be 32 bytes") }
        guard signature.count == Wire.rawSignatureLength else {
            throw .invalidField(field: "signature", reason: "must be 64 bytes raw r || s")
        }
        self.codeMAC = codeMAC
        self.signature = signature
    }

    public func encoded() -> Bytes { [MessageType.pairingProof.rawValue, Wire.version] + codeMAC + signature }

    public static func decode(_ bytes: Bytes) throws(MessageFormatError) -> PairingProofMessage {
        var reader = try ByteReader(bytes)
        try reader.expectType(.pairingProof)
        try reader.version()
        let mac = try reader.bytes(HMACSHA256.byteCount, "codeMAC")
        let signature = try reader.bytes(Wire.rawSignatureLength, "signature")
        try reader.expectEnd()
        return try PairingProofMessage(codeMAC: mac, signature: signature)
    }
}

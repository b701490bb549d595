// PairingProof, phone to car: the SPAKE2+ confirmation (knowledge of the code) and the
// possession signature of the phone key named in the PairingHello (idProver).
//
//   0        type 0x22
//   1        version 0x02
//   2..33    confirmP (32): HMAC(K_confirmP, shareV)
//   34..97   signature (64, raw r || s) by the phone key over
//            "OCK1-PAIR-PROOF" || PairingHello || PairingChallenge || confirmP

public struct PairingProofMessage: Equatable, Sendable {
    public static let length = 98
    public let confirmP: Bytes
    public let signature: Bytes

    public init(confirmP: Bytes, signature: Bytes) throws(MessageFormatError) {
        guard confirmP.count == SPAKE2Plus.confirmationLength else {
            throw .invalidField(field: "confirmP", reason: "must be 32 bytes")
        }
        try checkRawSignatureShape(signature, field: "signature")
        self.confirmP = confirmP
        self.signature = signature
    }

    public func encoded() -> Bytes { [MessageType.pairingProof.rawValue, PairingWire.version] + confirmP + signature }

    public static func decode(_ bytes: Bytes) throws(MessageFormatError) -> PairingProofMessage {
        var reader = try ByteReader(bytes)
        try reader.expectType(.pairingProof)
        _ = try reader.pairingVersion()
        let confirmP = try reader.bytes(SPAKE2Plus.confirmationLength, "confirmP")
        let signature = try reader.bytes(Wire.rawSignatureLength, "signature")
        try reader.expectEnd()
        return try PairingProofMessage(confirmP: confirmP, signature: signature)
    }
}

// PairingChallenge, car to phone: a fresh challenge, the car identity key the phone will pin,
// the vehicle ID, and the identity key's signature over the exchange so far.
//
//   0        type 0x21
//   1        version 0x01
//   2..33    challenge (32, random)
//   34..98   carIdentityPublicKey (65)
//   99       vehicleIDLen L (1...32)
//   100..    vehicleID (L)
//   100+L    carSignature (64, raw r || s) over "OCK1-PAIR-CHALLENGE" || PairingHello || bytes 0..<100+L

public struct PairingChallengeMessage: Equatable, Sendable {
    public static let signatureLabel: Bytes = Array("OCK1-PAIR-CHALLENGE".utf8)

    public let challenge: Bytes
    public let carIdentityPublicKey: Bytes
    public let vehicleID: VehicleID
    public let signature: Bytes

    public init(challenge: Bytes, carIdentityPublicKey: Bytes, vehicleID: VehicleID, signature: Bytes) throws(MessageFormatError) {
        guard challenge.count == Wire.challengeLength else {
            throw .invalidField(field: "challenge", reason: "must be \(Wire.challengeLength) bytes")
        }
        try checkSEC1Shape(carIdentityPublicKey, field: "carIdentityPub")
        guard signature.count == Wire.rawSignatureLength else {
            throw .invalidField(field: "carSignature", reason: "must be 64 bytes raw r || s")
        }
        self.challenge = challenge
        self.carIdentityPublicKey = carIdentityPublicKey
        self.vehicleID = vehicleID
        self.signature = signature
    }

    public static func body(challenge: Bytes, carIdentityPublicKey: Bytes, vehicleID: VehicleID) -> Bytes {
        var out: Bytes = [MessageType.pairingChallenge.rawValue, Wire.version]
        out += challenge
        out += carIdentityPublicKey
        out.append(UInt8(vehicleID.bytes.count))
        out += vehicleID.bytes
        return out
    }

    public static func signatureInput(pairingHello: Bytes, body: Bytes) -> Bytes { signatureLabel + pairingHello + body }

    public var body: Bytes {
        Self.body(challenge: challenge, carIdentityPublicKey: carIdentityPublicKey, vehicleID: vehicleID)
    }

    public func encoded() -> Bytes { body + signature }

    public static func decode(_ bytes: Bytes) throws(MessageFormatError) -> PairingChallengeMessage {
        var reader = try ByteReader(bytes)
        try reader.expectType(.pairingChallenge)
        try reader.version()
        let challenge = try reader.bytes(Wire.challengeLength, "challenge")
        let identity = try reader.bytes(Wire.publicKeyLength, "carIdentityPub")
        let idLength = Int(try reader.byte("vehicleIDLen"))
        let vehicleID = try VehicleID(bytes: reader.bytes(idLength, "vehicleID"))
        let signature = try reader.bytes(Wire.rawSignatureLength, "carSignature")
        try reader.expectEnd()
        return try PairingChallengeMessage(challenge: challenge, carIdentityPublicKey: identity, vehicleID: vehicleID,
                                           signature: signature)
    }
}

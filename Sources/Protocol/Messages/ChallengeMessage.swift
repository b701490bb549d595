// Challenge, car to phone: a fresh challenge, the car's ephemeral key, the vehicle ID, and the
// car identity key's signature binding all of it to the Hello it answers.
//
//   0        type 0x02
//   1        version 0x01
//   2..33    challenge (32, random)
//   34..98   car ephemeral public key (65, SEC1 uncompressed)
//   99       vehicleIDLen (1...32)
//   100..    vehicleID (printable ASCII)
//   then     carSignature (64, raw r || s), ECDSA-SHA256 over
//            "OCK1-CHALLENGE" || Hello (as received) || all Challenge bytes before the signature

public struct ChallengeMessage: SignedObject, Equatable {
    /// Domain-separation label for the car's signature, so it can never be mistaken for a
    /// signature the identity key makes for another purpose.
    public static let signatureLabel: Bytes = Array("OCK1-CHALLENGE".utf8)
    public static let signatureField = "carSignature"

    public let challenge: Bytes
    public let carEphemeralPublicKey: Bytes
    public let vehicleID: VehicleID
    public let signature: Bytes

    public init(challenge: Bytes, carEphemeralPublicKey: Bytes, vehicleID: VehicleID, signature: Bytes) throws(MessageFormatError) {
        guard challenge.count == Wire.challengeLength else {
            throw .invalidField(field: "challenge", reason: "must be \(Wire.challengeLength) bytes")
        }
        try checkSEC1Shape(carEphemeralPublicKey, field: "carEphemeralPub")
        try Self.checkSignature(signature)
        self.challenge = challenge
        self.carEphemeralPublicKey = carEphemeralPublicKey
        self.vehicleID = vehicleID
        self.signature = signature
    }

    /// Everything before the signature: the part the car signs.
    public static func body(challenge: Bytes, carEphemeralPublicKey: Bytes, vehicleID: VehicleID) -> Bytes {
        var out: Bytes = [MessageType.challenge.rawValue, Wire.version]
        out += challenge
        out += carEphemeralPublicKey
        out.append(UInt8(vehicleID.bytes.count))
        out += vehicleID.bytes
        return out
    }

    /// The exact bytes the car's identity key signs.
    public static func signatureInput(hello: Bytes, body: Bytes) -> Bytes { signedInput(context: hello, body: body) }

    public var body: Bytes {
        ChallengeMessage.body(challenge: challenge, carEphemeralPublicKey: carEphemeralPublicKey, vehicleID: vehicleID)
    }

    public static func decode(_ bytes: Bytes) throws(MessageFormatError) -> ChallengeMessage {
        var reader = try ByteReader(bytes)
        try reader.expectType(.challenge)
        try reader.version()
        let challenge = try reader.bytes(Wire.challengeLength, "challenge")
        let ephemeral = try reader.bytes(Wire.publicKeyLength, "carEphemeralPub")
        let idLength = Int(try reader.byte("vehicleIDLen"))
        let vehicleID = try VehicleID(bytes: reader.bytes(idLength, "vehicleID"))
        let signature = try readSignature(&reader)
        try reader.expectEnd()
        return try ChallengeMessage(challenge: challenge, carEphemeralPublicKey: ephemeral,
                                    vehicleID: vehicleID, signature: signature)
    }
}

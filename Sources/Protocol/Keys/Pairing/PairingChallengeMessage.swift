// PairingChallenge, car to phone: the car's SPAKE2+ share and confirmation, the identity key
// the phone will pin, the vehicle ID, and the identity key's signature over the exchange.
//
//   0          type 0x21
//   1          version 0x02
//   2..33      challenge (32, random per attempt; salts the AdvertisingKeyGrant)
//   34..49     windowID (16, random per pairing window; in the SPAKE2+ Context)
//   50..114    carIdentityPublicKey (65; idVerifier)
//   115        vehicleIDLen L (1...32)
//   116..      vehicleID (L)
//   116+L      shareV (65): Y = y*P + w0*N
//   181+L      confirmV (32): HMAC(K_confirmV, shareP)
//   213+L      carSignature (64, raw r || s) over "OCK1-PAIR-CHALLENGE" || PairingHello || bytes 0..<213+L

public struct PairingChallengeMessage: SignedObject, Equatable {
    public static let signatureLabel: Bytes = Array("OCK1-PAIR-CHALLENGE".utf8)
    public static let signatureField = "carSignature"

    public let challenge: Bytes
    public let windowID: Bytes
    public let carIdentityPublicKey: Bytes
    public let vehicleID: VehicleID
    public let shareV: Bytes
    public let confirmV: Bytes
    public let signature: Bytes

    public init(challenge: Bytes, windowID: Bytes, carIdentityPublicKey: Bytes, vehicleID: VehicleID, shareV: Bytes,
                confirmV: Bytes, signature: Bytes) throws(MessageFormatError) {
        guard challenge.count == Wire.challengeLength else {
            throw .invalidField(field: "challenge", reason: "must be \(Wire.challengeLength) bytes")
        }
        guard windowID.count == PairingWire.windowIDLength else {
            throw .invalidField(field: "windowID", reason: "must be \(PairingWire.windowIDLength) bytes")
        }
        try checkSEC1Shape(carIdentityPublicKey, field: "carIdentityPub")
        try checkSEC1Shape(shareV, field: "shareV")
        guard confirmV.count == SPAKE2Plus.confirmationLength else {
            throw .invalidField(field: "confirmV", reason: "must be 32 bytes")
        }
        try Self.checkSignature(signature)
        self.challenge = challenge
        self.windowID = windowID
        self.carIdentityPublicKey = carIdentityPublicKey
        self.vehicleID = vehicleID
        self.shareV = shareV
        self.confirmV = confirmV
        self.signature = signature
    }

    /// Every byte before the signature.
    public static func body(challenge: Bytes, windowID: Bytes, carIdentityPublicKey: Bytes, vehicleID: VehicleID,
                            shareV: Bytes, confirmV: Bytes) -> Bytes {
        var out: Bytes = [MessageType.pairingChallenge.rawValue, PairingWire.version]
        out += challenge
        out += windowID
        out += carIdentityPublicKey
        out.append(UInt8(vehicleID.bytes.count))
        out += vehicleID.bytes
        out += shareV
        out += confirmV
        return out
    }

    public static func signatureInput(pairingHello: Bytes, body: Bytes) -> Bytes { signedInput(context: pairingHello, body: body) }

    public var body: Bytes {
        Self.body(challenge: challenge, windowID: windowID, carIdentityPublicKey: carIdentityPublicKey,
                  vehicleID: vehicleID, shareV: shareV, confirmV: confirmV)
    }

    public static func decode(_ bytes: Bytes) throws(MessageFormatError) -> PairingChallengeMessage {
        var reader = try ByteReader(bytes)
        try reader.expectType(.pairingChallenge)
        _ = try reader.pairingVersion()
        let challenge = try reader.bytes(Wire.challengeLength, "challenge")
        let windowID = try reader.bytes(PairingWire.windowIDLength, "windowID")
        let identity = try reader.bytes(Wire.publicKeyLength, "carIdentityPub")
        let idLength = Int(try reader.byte("vehicleIDLen"))
        let vehicleID = try VehicleID(bytes: reader.bytes(idLength, "vehicleID"))
        let shareV = try reader.bytes(Wire.publicKeyLength, "shareV")
        let confirmV = try reader.bytes(SPAKE2Plus.confirmationLength, "confirmV")
        let signature = try readSignature(&reader)
        try reader.expectEnd()
        return try PairingChallengeMessage(challenge: challenge, windowID: windowID, carIdentityPublicKey: identity,
                                           vehicleID: vehicleID, shareV: shareV, confirmV: confirmV, signature: signature)
    }
}

// The signed answer to a ServiceChallenge (docs/protocol.md 18.13), 74 + C bytes where C is the
// challenge's length (27 + L):
//   0        type 0x49
//   1        version 0x01
//   2..      challenge (C bytes, exactly as the car showed it; self-delimiting)
//   2+C      signerKeyID (8)
//   10+C     signature (64, raw r || s): ECDSA-SHA256 over "OCK1-SERVICE-AUTH" || bytes 0..<10+C
//
// The label keeps the signature from doubling as any other object's (an AuthResponse, a remote
// command); the challenge inside binds it to one car and one nonce.

public struct ServiceAuthorisation: SignerNamedObject, Equatable {
    public static let typeByte: UInt8 = 0x49
    public static let version: UInt8 = 0x01
    public static let signatureLabel: Bytes = Array("OCK1-SERVICE-AUTH".utf8)
    public static let maxLength = 2 + ServiceChallenge.maxLength + KeyID.length + Wire.rawSignatureLength

    public let challenge: ServiceChallenge
    public let signerKeyID: KeyID
    public let signature: Bytes

    public init(challenge: ServiceChallenge, signerKeyID: KeyID, signature: Bytes) throws(MessageFormatError) {
        try Self.checkSignature(signature)
        self.challenge = challenge
        self.signerKeyID = signerKeyID
        self.signature = signature
    }

    /// Signs `challenge` (what `carkey service sign` does on the engineer's laptop).
    public static func sign(_ challenge: ServiceChallenge, by signer: any ProtocolSigner) throws(KeyObjectError) -> ServiceAuthorisation {
        try issue(by: signer) { signerKeyID, signature throws(MessageFormatError) in
            try ServiceAuthorisation(challenge: challenge, signerKeyID: signerKeyID, signature: signature)
        }
    }

    static func body(_ challenge: ServiceChallenge, _ signerKeyID: KeyID) -> Bytes {
        [typeByte, version] + challenge.encoded() + signerKeyID.bytes
    }

    public var body: Bytes { Self.body(challenge, signerKeyID) }

    /// Strict: exact length, a well-formed challenge inside, no trailing bytes.
    public static func decode(_ bytes: Bytes) throws(MessageFormatError) -> ServiceAuthorisation {
        var reader = try ByteReader(bytes, limit: maxLength)
        let type = try reader.byte("type")
        guard type == typeByte else { throw .invalidField(field: "type", reason: "a service authorisation starts with 0x49") }
        let version = try reader.byte("version")
        guard version == Self.version else { throw .unsupportedVersion(version) }
        let challenge = try ServiceChallenge.read(&reader)
        let signer = try KeyID(bytes: reader.bytes(KeyID.length, "signerKeyID"))
        let signature = try readSignature(&reader)
        try reader.expectEnd()
        return try ServiceAuthorisation(challenge: challenge, signerKeyID: signer, signature: signature)
    }
}

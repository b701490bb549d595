// AdvertisingKeyGrant, car to phone, right after PairingResult 0 on the same link: the car's
// advertising key, encrypted to the phone key just enrolled (docs/protocol.md section 18.12).
//
//   0       type 0x24
//   1       version 0x01
//   2..17   ciphertext (16): AES-256-GCM of the advertising key
//   18..33  tag (16)
//
//   grantKey = HKDF-SHA256(IKM = ECDH(car identity, phone long-term key).x,
//                          salt = the PairingChallenge's challenge (32),
//                          info = "OCK1-ADV-KEY" || carIdentityPub || phonePub, L = 32)
//   nonce    = 12 zero bytes (grantKey is used once: every challenge is fresh)
//   AAD      = bytes 0..1 (24 01)

public struct AdvertisingKeyGrantMessage: Equatable, Sendable {
    public static let length = 34
    /// "OCK1-ADV-KEY" = 4f434b312d4144562d4b4559
    public static let keyLabel: Bytes = Array("OCK1-ADV-KEY".utf8)
    public static let header: Bytes = [MessageType.advertisingKeyGrant.rawValue, Wire.version]
    public static let nonce = Bytes(repeating: 0, count: AESGCM.nonceLength)

    public let ciphertext: Bytes
    public let tag: Bytes

    public init(ciphertext: Bytes, tag: Bytes) throws(MessageFormatError) {
        guard ciphertext.count == AdvertisingKey.length else {
            throw .invalidField(field: "ciphertext", reason: "must be \(AdvertisingKey.length) bytes")
        }
        guard tag.count == Wire.tagLength else { throw .invalidField(field: "tag", reason: "must be \(Wire.tagLength) bytes") }
        self.ciphertext = ciphertext
        self.tag = tag
    }

    public func encoded() -> Bytes { Self.header + ciphertext + tag }

    public static func decode(_ bytes: Bytes) throws(MessageFormatError) -> AdvertisingKeyGrantMessage {
        var reader = try ByteReader(bytes)
        try reader.expectType(.advertisingKeyGrant)
        try reader.version()
        let ciphertext = try reader.bytes(AdvertisingKey.length, "ciphertext")
        let tag = try reader.bytes(Wire.tagLength, "tag")
        try reader.expectEnd()
        return try AdvertisingKeyGrantMessage(ciphertext: ciphertext, tag: tag)
    }

    /// HKDF info: "OCK1-ADV-KEY" || carIdentityPub || phonePub (142 bytes).
    public static func keyInfo(carIdentity: Bytes, phone: Bytes) -> Bytes { keyLabel + carIdentity + phone }

    /// The single-use AES-256-GCM key. `sharedSecret` is the ECDH x-coordinate of the car
    /// identity key and the phone long-term key (either side's view).
    public static func grantKey(sharedSecret: Bytes, challenge: Bytes, carIdentity: Bytes, phone: Bytes) throws -> Bytes {
        try HKDF.deriveKey(inputKeyMaterial: sharedSecret, salt: challenge,
                           info: keyInfo(carIdentity: carIdentity, phone: phone), outputByteCount: 32)
    }

    /// The car side: encrypts `key` for the phone.
    public static func seal(_ key: AdvertisingKey, sharedSecret: Bytes, challenge: Bytes, carIdentity: Bytes,
                            phone: Bytes) throws -> AdvertisingKeyGrantMessage {
        var grantKey = try grantKey(sharedSecret: sharedSecret, challenge: challenge, carIdentity: carIdentity, phone: phone)
        defer { ConstantTime.wipe(&grantKey) }
        let sealed = try AESGCM.seal(key.bytes, key: grantKey, nonce: nonce, authenticating: header)
        return try AdvertisingKeyGrantMessage(ciphertext: sealed.ciphertext, tag: sealed.tag)
    }

    /// The phone side: decrypts and authenticates; `CryptoError.authenticationFailed` when the
    /// grant was not made for this phone key, car identity key and challenge, or was altered.
    public func open(sharedSecret: Bytes, challenge: Bytes, carIdentity: Bytes, phone: Bytes) throws -> AdvertisingKey {
        var grantKey = try Self.grantKey(sharedSecret: sharedSecret, challenge: challenge, carIdentity: carIdentity, phone: phone)
        defer { ConstantTime.wipe(&grantKey) }
        let plaintext = try AESGCM.open(ciphertext: ciphertext, tag: tag, key: grantKey, nonce: Self.nonce,
                                        authenticating: Self.header)
        return try AdvertisingKey(bytes: plaintext)
    }
}

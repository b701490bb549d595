// From the handshake to two AES-256-GCM keys and the UWB ranging key. Only ephemeral keys feed the KDF: identity keys
// sign, so a later theft of either identity key does not open recorded sessions.

/// One key per direction, so the two sides never encrypt under the same key, and a third for
/// UWB ranging (docs/protocol.md section 19), so ranging material can never collide with a
/// record key and dies with the session.
public struct SessionKeys: Sendable, Equatable, CustomStringConvertible {
    public let phoneToCar: Bytes
    public let carToPhone: Bytes
    /// Root of every ranging session's STS and frame keys (RangingMaterial); never used directly.
    public let ranging: Bytes

    /// Never the key bytes: logs and test failures must not leak a session.
    public var description: String { "SessionKeys(3 keys, redacted)" }
}

public enum KeySchedule {
    public static let phoneToCarInfo: Bytes = Array("OCK1 phone->car".utf8)
    public static let carToPhoneInfo: Bytes = Array("OCK1 car->phone".utf8)
    public static let rangingInfo: Bytes = Array("OCK1 uwb-ranging".utf8)
    public static let keyLength = 32

    /// TH = SHA-256(Hello || Challenge (with signature) || AuthResponse), each exactly as sent.
    /// Binding every byte means both sides derive the same keys only if they saw the same
    /// messages.
    public static func transcriptHash(hello: Bytes, challenge: Bytes, authResponse: Bytes) -> Bytes {
        SHA256.hash(hello + challenge + authResponse)
    }

    /// HKDF-SHA256(ikm = ECDH x-coordinate, salt = challenge, info = label || TH), 32 bytes each.
    /// The ranging key is derived with the others, while the ECDH secret still exists: it is
    /// wiped right after, so a ranging key cannot be made later.
    public static func deriveKeys(sharedSecret: Bytes, challenge: Bytes, transcriptHash: Bytes) throws -> SessionKeys {
        let p2c = try HKDF.deriveKey(inputKeyMaterial: sharedSecret, salt: challenge,
                                     info: phoneToCarInfo + transcriptHash, outputByteCount: keyLength)
        let c2p = try HKDF.deriveKey(inputKeyMaterial: sharedSecret, salt: challenge,
                                     info: carToPhoneInfo + transcriptHash, outputByteCount: keyLength)
        let ranging = try HKDF.deriveKey(inputKeyMaterial: sharedSecret, salt: challenge,
                                         info: rangingInfo + transcriptHash, outputByteCount: keyLength)
        return SessionKeys(phoneToCar: p2c, carToPhone: c2p, ranging: ranging)
    }

    /// ECDH, transcript hash and HKDF in one step; the shared secret is wiped before returning.
    static func deriveKeys(ephemeral: P256PrivateKey, peer: P256PublicKey, challenge: Bytes,
                           hello: Bytes, challengeMessage: Bytes, authResponse: Bytes) throws -> SessionKeys {
        var shared = try ephemeral.sharedSecret(with: peer)
        defer { ConstantTime.wipe(&shared) }
        let th = transcriptHash(hello: hello, challenge: challengeMessage, authResponse: authResponse)
        return try deriveKeys(sharedSecret: shared, challenge: challenge, transcriptHash: th)
    }
}

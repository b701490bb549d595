// The arithmetic of HMAC and policy sessions, SHA-256 only (Part 1 §19.6 "HMAC computation",
// §21 "Session-based encryption"), separate from I/O so it can be checked with fixed inputs.
// The vault's objects all have an empty authValue, so the HMAC key is the session key alone
// whatever the bind rules say (Part 1 §19.6.8: key = sessionKey || authValue).
import Protocol

enum TPM2SessionCrypto {
    /// sessionKey = KDFa(SHA-256, bindAuth || salt, "ATH", nonceTPM, nonceCaller, 256)
    /// (Part 1 §19.6.8, eq. 19). The vault binds to nothing (TPM_RH_NULL), so the key is the salt.
    static func sessionKey(salt: Bytes, nonceTPM: Bytes, nonceCaller: Bytes) -> Bytes {
        TPM2KDF.kdfa(key: salt, label: "ATH", contextU: nonceTPM, contextV: nonceCaller, bits: 256)
    }

    /// cpHash = SHA-256(commandCode || name1 ... || parameters) (Part 1 §18.7, eq. 4): names of
    /// the handles in order, parameters as sent (after encryption).
    static func commandParameterHash(code: UInt32, names: [Bytes], parameters: Bytes) -> Bytes {
        var writer = TPM2Writer()
        writer.u32(code)
        for name in names { writer.raw(name) }
        writer.raw(parameters)
        return SHA256.hash(writer.bytes)
    }

    /// rpHash = SHA-256(responseCode (0) || commandCode || parameters) (Part 1 §18.8, eq. 6).
    static func responseParameterHash(code: UInt32, parameters: Bytes) -> Bytes {
        var writer = TPM2Writer()
        writer.u32(0)
        writer.u32(code)
        writer.raw(parameters)
        return SHA256.hash(writer.bytes)
    }

    /// The command HMAC: HMAC(sessionKey || authValue, cpHash || nonceCaller || nonceTPM ||
    /// sessionAttributes) (Part 1 §19.6.5, eq. 14), nonceDecrypt/nonceEncrypt omitted because
    /// the session that authorises is the one that encrypts.
    static func commandHMAC(key: Bytes, cpHash: Bytes, nonceCaller: Bytes, nonceTPM: Bytes, attributes: UInt8) -> Bytes {
        HMACSHA256.authenticationCode(key: key, message: cpHash + nonceCaller + nonceTPM + [attributes])
    }

    /// The response HMAC: HMAC(sessionKey || authValue, rpHash || nonceTPM || nonceCaller ||
    /// sessionAttributes) (Part 1 §19.6.6, eq. 16), nonceTPM being the one in this response.
    static func responseHMAC(key: Bytes, rpHash: Bytes, nonceTPM: Bytes, nonceCaller: Bytes, attributes: UInt8) -> Bytes {
        HMACSHA256.authenticationCode(key: key, message: rpHash + nonceTPM + nonceCaller + [attributes])
    }

    /// AES-128-CFB key and IV for one direction: KDFa(SHA-256, sessionKey || authValue, "CFB",
    /// nonceNewer, nonceOlder, 256) split into 128-bit key then 128-bit IV (Part 1 §21.3, eq. 36).
    /// Commands: newer = nonceCaller, older = nonceTPM; responses the reverse.
    static func cfbKey(sessionKey: Bytes, nonceNewer: Bytes, nonceOlder: Bytes) -> (key: Bytes, iv: Bytes) {
        var both = TPM2KDF.kdfa(key: sessionKey, label: "CFB", contextU: nonceNewer, contextV: nonceOlder, bits: 256)
        defer { ConstantTime.wipe(&both) }
        return (Bytes(both[0..<16]), Bytes(both[16..<32]))
    }

    /// En- or decrypts the buffer of the first parameter when it is a TPM2B (Part 1 §21.1: only
    /// the data of a sized first parameter is encrypted, never its size). Returns nil when the
    /// parameter area is too short to hold the TPM2B it claims.
    static func cryptFirstParameter(_ parameters: Bytes, key: Bytes, iv: Bytes, encrypt: Bool) -> Bytes? {
        guard parameters.count >= 2 else { return nil }
        let size = Int(parameters[0]) << 8 | Int(parameters[1])
        guard 2 + size <= parameters.count else { return nil }
        guard size > 0 else { return parameters }
        var buffer = Bytes(parameters[2..<(2 + size)])
        defer { ConstantTime.wipe(&buffer) }
        guard var crypted = TPM2CFB.apply(buffer, key: key, iv: iv, encrypt: encrypt) else { return nil }
        defer { ConstantTime.wipe(&crypted) }
        // One result buffer, filled in place; the temporaries holding either side are wiped.
        var result = Bytes()
        result.reserveCapacity(parameters.count)
        result += parameters[0..<2]
        result += crypted
        result += parameters[(2 + size)...]
        return result
    }

    /// The salt for a session whose tpmKey is an ECC P-256 key with public point (x, y): an
    /// ephemeral key pair, Z = x([d_e]Q_s), salt = KDFe(SHA-256, Z, "SECRET", Q_e.x, Q_s.x, 256)
    /// (Part 1 §C.6.1 and §11.4.10.3). encryptedSalt is Q_e as a TPMS_ECC_POINT (Part 2 §11.2.5.2).
    static func eccSalt(tpmKeyX: Bytes, tpmKeyY: Bytes) throws -> (salt: Bytes, encryptedSalt: Bytes) {
        guard let x = TPM2Buffers.padded32(tpmKeyX), let y = TPM2Buffers.padded32(tpmKeyY) else {
            throw SecureKeyError.malformed(what: "TPM primary public point (coordinates longer than 32 bytes)")
        }
        let tpmKey = try P256PublicKey(sec1: [0x04] + x + y)
        let ephemeral = try P256PrivateKey.generate()
        var z = try ephemeral.sharedSecret(with: tpmKey)
        defer { ConstantTime.wipe(&z) }
        let qe = ephemeral.publicKey.sec1
        let qeX = Bytes(qe[1...32])
        let salt = TPM2KDF.kdfe(z: z, use: "SECRET", partyU: qeX, partyV: tpmKeyX, bits: 256)
        var point = TPM2Writer()
        point.sized(qeX)
        point.sized(Bytes(qe[33...64]))
        return (salt, point.bytes)
    }
}

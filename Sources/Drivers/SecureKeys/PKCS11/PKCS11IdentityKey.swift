// The car identity as a token-resident P-256 key pair: the private half is created on the token,
// marked sensitive and non-extractable, and only ever used through C_Sign and C_DeriveKey.
import CPKCS11
import Protocol

public final class PKCS11IdentityKey: ProtocolKeyAgreement, @unchecked Sendable {
    // @unchecked Sendable: `privateHandle` changes only inside `token.serialized` (its lock).
    static let label = "opencarkey-identity"
    /// CKA_ID shared by both halves, so the public object found is the private key's own.
    static let id: Bytes = Array("opencarkey:identity:1".utf8)

    public let publicKey: P256PublicKey
    private let token: PKCS11Token
    /// The private key's handle and the token generation it belongs to: a restarted bridge
    /// has a new session, where the key is found again.
    private var privateHandle: (generation: Int, handle: CK_OBJECT_HANDLE)

    private init(token: PKCS11Token, privateHandle: CK_OBJECT_HANDLE, publicKey: P256PublicKey) {
        self.token = token
        self.privateHandle = (token.generation, privateHandle)
        self.publicKey = publicKey
    }

    /// The private key's handle in the current session. Called inside `token.serialized`.
    private func currentHandle(_ calls: PKCS11Calls) throws(SecureKeyError) -> CK_OBJECT_HANDLE {
        guard privateHandle.generation != token.generation else { return privateHandle.handle }
        let found = try calls.find(Self.template(CKO_PRIVATE_KEY))
        guard found.count == 1 else {
            throw SecureKeyError.malformed(what: "identity on token \"\(token.label)\" after a bridge restart: \(found.count) private keys")
        }
        privateHandle = (token.generation, found[0])
        return found[0]
    }

    /// The identity on the token, created when missing and `create` is true.
    static func load(on token: PKCS11Token, create: Bool) throws(SecureKeyError) -> PKCS11IdentityKey? {
        try token.serialized { (calls) throws(SecureKeyError) -> PKCS11IdentityKey? in
            var privateKeys = try calls.find(template(CKO_PRIVATE_KEY))
            var publicKeys = try calls.find(template(CKO_PUBLIC_KEY))
            if privateKeys.isEmpty {
                guard create else { return nil }
                let made = try generate(calls)
                privateKeys = [made.private]
                publicKeys = [made.public]
            }
            guard privateKeys.count == 1, publicKeys.count == 1 else {
                throw SecureKeyError.malformed(what: "identity on token \"\(token.label)\": \(privateKeys.count) private and "
                    + "\(publicKeys.count) public keys labelled \(label); exactly one pair is expected (remove the extra objects)")
            }
            let point = try calls.attribute(CKA_EC_POINT, of: publicKeys[0], "identity CKA_EC_POINT")
            guard let sec1 = PKCS11ECPoint.uncompressedPoint(fromAttribute: point),
                  let publicKey = try? P256PublicKey(sec1: sec1) else {
                throw SecureKeyError.malformed(what: "identity CKA_EC_POINT on token \"\(token.label)\" (not a P-256 point)")
            }
            return PKCS11IdentityKey(token: token, privateHandle: privateKeys[0], publicKey: publicKey)
        }
    }

    /// ECDSA-SHA256: the digest is taken here (CKM_ECDSA signs a hash; not every token has
    /// CKM_ECDSA_SHA256), the token signs it and answers r || s.
    public func signature(for message: Bytes) throws -> ECDSASignature {
        let digest = SHA256.hash(message)
        let raw = try token.serialized { (calls) throws(SecureKeyError) -> Bytes in
            try calls.sign(digest, key: try currentHandle(calls), mechanism: CKM_ECDSA, maxLength: 64)
        }
        guard raw.count == 64, let signature = try? ECDSASignature(rawRepresentation: raw) else {
            throw SecureKeyError.malformed(what: "ECDSA signature from token \"\(token.label)\" (\(raw.count) bytes)")
        }
        return signature
    }

    /// ECDH on the token (CKM_ECDH1_DERIVE, no KDF): the x-coordinate is derived into a
    /// session object, read out and the object destroyed. The token checks the peer's point.
    public func sharedSecret(with peer: P256PublicKey) throws -> Bytes {
        try token.serialized { (calls) throws(SecureKeyError) -> Bytes in
            // A session object (CKA_TOKEN false) that is neither sensitive nor non-extractable:
            // its value must be read, and it vanishes with the session even if the destroy
            // below never runs.
            let secret = try calls.deriveECDH(from: try currentHandle(calls), publicData: peer.sec1, template: [
                .ulong(CKA_CLASS, CKO_SECRET_KEY), .ulong(CKA_KEY_TYPE, CKK_GENERIC_SECRET),
                .ulong(CKA_VALUE_LEN, 32), .bool(CKA_TOKEN, false), .bool(CKA_PRIVATE, true),
                .bool(CKA_SENSITIVE, false), .bool(CKA_EXTRACTABLE, true),
            ])
            defer { try? calls.destroy(secret) }
            var value = try calls.attribute(CKA_VALUE, of: secret, "ECDH shared secret")
            guard value.count == 32 else {
                ConstantTime.wipe(&value)
                throw SecureKeyError.malformed(what: "ECDH shared secret from token \"\(token.label)\" (\(value.count) bytes)")
            }
            return value
        }
    }

    private static func template(_ objectClass: UInt) -> [PKCS11Attribute] {
        [.ulong(CKA_CLASS, objectClass), .ulong(CKA_KEY_TYPE, CKK_EC), .bytes(CKA_LABEL, Array(label.utf8)), .bytes(CKA_ID, id)]
    }

    /// A new pair on the token: the private key sensitive and never extractable, usable only to
    /// sign and derive; it needs a login (CKA_PRIVATE).
    private static func generate(_ calls: PKCS11Calls) throws(SecureKeyError) -> (public: CK_OBJECT_HANDLE, private: CK_OBJECT_HANDLE) {
        let name: Bytes = Array(label.utf8)
        return try calls.generateKeyPair(mechanism: CKM_EC_KEY_PAIR_GEN, publicTemplate: [
            .ulong(CKA_CLASS, CKO_PUBLIC_KEY), .ulong(CKA_KEY_TYPE, CKK_EC),
            .bytes(CKA_EC_PARAMS, PKCS11ECPoint.p256Parameters), .bool(CKA_TOKEN, true), .bool(CKA_PRIVATE, false),
            .bool(CKA_VERIFY, true), .bytes(CKA_LABEL, name), .bytes(CKA_ID, id),
        ], privateTemplate: [
            .ulong(CKA_CLASS, CKO_PRIVATE_KEY), .ulong(CKA_KEY_TYPE, CKK_EC),
            .bool(CKA_TOKEN, true), .bool(CKA_PRIVATE, true), .bool(CKA_SENSITIVE, true), .bool(CKA_EXTRACTABLE, false),
            .bool(CKA_SIGN, true), .bool(CKA_DERIVE, true), .bytes(CKA_LABEL, name), .bytes(CKA_ID, id),
        ])
    }
}

// The car's long-term P-256 identity key, sealed like every other record (PKCS#8 DER payload).
import Protocol

extension CarStore {
    /// The single identity row's ID.
    public static let identityRecordID = Bytes("car".utf8)

    /// The identity key, generated and stored on first start. A tampered row throws
    /// `StorageError.tampered` and is never replaced silently: a new identity would unpair every
    /// phone, so that takes an operator's decision.
    public func loadOrCreateIdentityKey() throws -> P256PrivateKey {
        try write { transaction in
            if var der = try transaction.get(kind: .identity, id: Self.identityRecordID) {
                defer { ConstantTime.wipe(&der) }
                return try P256PrivateKey(pkcs8DER: der)
            }
            let key = try P256PrivateKey.generate()
            var der = try key.pkcs8DER()
            defer { ConstantTime.wipe(&der) }
            try transaction.put(der, kind: .identity, id: Self.identityRecordID)
            return key
        }
    }
}

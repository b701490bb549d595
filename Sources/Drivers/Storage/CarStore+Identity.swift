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

extension CarStore {
    /// The advertising key's row: kind `identity` (the same sealing and durability as the
    /// identity key), ID "advertising".
    public static let advertisingKeyRecordID = Bytes("advertising".utf8)

    /// The car's advertising key (docs/protocol.md section 18.12): 16 bytes from the CSPRNG,
    /// created and stored on first start, the same key afterwards. A tampered row throws
    /// `StorageError.tampered` and is not replaced: a new key would hide the car from every
    /// enrolled phone until it enrolls again, which takes an operator's decision.
    public func loadOrCreateAdvertisingKey() throws -> AdvertisingKey {
        try write { transaction in
            if let stored = try transaction.get(kind: .identity, id: Self.advertisingKeyRecordID) {
                guard stored.count == AdvertisingKey.length else {
                    throw StorageError.invalidArgument("stored advertising key has \(stored.count) bytes, not \(AdvertisingKey.length)")
                }
                return try AdvertisingKey(bytes: stored)
            }
            let key = try AdvertisingKey.generate(transaction.randomSource)
            try transaction.put(key.bytes, kind: .identity, id: Self.advertisingKeyRecordID)
            return key
        }
    }
}

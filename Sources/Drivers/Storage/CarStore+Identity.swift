// The car's long-term P-256 identity key, sealed like every other record (PKCS#8 DER payload).
import Protocol

extension CarStore {
    /// The single identity row's ID.
    public static let identityRecordID = Bytes("car".utf8)

    /// The identity key, generated and stored on first start. A tampered row throws
    /// `StorageError.tampered` and is never replaced silently: a new identity would unpair every
    /// phone, so that takes an operator's decision. For the same reason a missing row is only
    /// created in a fresh state directory (`isFreshStateDirectory`); a store that lost its
    /// identity while the storage key stayed (carkey.db truncated or replaced, its WAL lost,
    /// the row deleted) throws `StorageError.identityMissing`.
    public func loadOrCreateIdentityKey() throws(StorageError) -> P256PrivateKey { try StorageError.wrap {
            let key = try write { transaction -> P256PrivateKey in
                if var der = try transaction.get(kind: .identity, id: Self.identityRecordID) {
                    defer { ConstantTime.wipe(&der) }
                    return try P256PrivateKey(pkcs8DER: der)
                }
                guard isFreshStateDirectory else { throw StorageError.identityMissing(stateDirectory: stateDirectory.path) }
                let key = try P256PrivateKey.generate()
                var der = try key.pkcs8DER()
                defer { ConstantTime.wipe(&der) }
                try transaction.put(der, kind: .identity, id: Self.identityRecordID)
                return key
            }
            // The identity is durable: from now on the key file says "this car exists".
            try fileKey?.promote()
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
    public func loadOrCreateAdvertisingKey() throws(StorageError) -> AdvertisingKey { try StorageError.wrap {
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
}

extension CarStore {
    /// The identity with a key vault (issue 18). A sealed identity row wins: a car migrated from
    /// the file vault keeps its identity (now sealed under the vault's storage key) until the
    /// operator asks for a new one. Otherwise the device's identity; one is created in the
    /// device only while the store holds nothing else a new identity would orphan (a fresh
    /// state directory, or a first start that stopped before writing anything). No identity
    /// row is written for a device identity: it never leaves the device.
    public func loadOrCreateIdentity(vault: any CarKeyVault) throws -> any ProtocolKeyAgreement {
        let stored: P256PrivateKey? = try read { transaction in
            guard var der = try transaction.get(kind: .identity, id: Self.identityRecordID) else { return nil }
            defer { ConstantTime.wipe(&der) }
            return try P256PrivateKey(pkcs8DER: der)
        }
        if let stored { return stored }
        if let device = try vault.deviceIdentity(create: false) { return device }
        guard try isFreshStateDirectory || !Self.holdsSealedRecords(database) else {
            throw StorageError.identityMissing(stateDirectory: stateDirectory.path)
        }
        guard let created = try vault.deviceIdentity(create: true) else {
            throw StorageError.identityMissing(stateDirectory: stateDirectory.path)
        }
        return created
    }
}

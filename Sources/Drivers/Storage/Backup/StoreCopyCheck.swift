// Is this file a complete store of this car? The checks a backup must pass before it is kept
// and before it replaces a car's store: SQLite can read it, it is an OpenCarKey store of a
// schema this code knows, PRAGMA integrity_check is clean, and it holds the car identity,
// which opens with the storage key of the state directory (the records are sealed with it).
import CSQLite
import Protocol

/// What a checked copy holds (printed by backup and restore).
public struct StoreCopySummary: Equatable, Sendable, CustomStringConvertible {
    public let schemaVersion: Int32
    /// Enrolled phone keys (owner and shared).
    public let keys: Int
    /// Every sealed record (keys, shares, revocations, identity, ...).
    public let sealedRecords: Int
    public let events: Int
    public let lastEventSequence: Int64
    /// The key ID of the car identity's public key.
    public let identity: KeyID

    public var description: String {
        "schema \(schemaVersion), car identity \(identity), \(keys) phone key(s), \(sealedRecords) sealed record(s), "
            + "\(events) event(s) up to #\(lastEventSequence)"
    }
}

enum StoreCopyCheck {
    /// Checks the database open on `connection` (`path` names it in errors) against `key`, the
    /// storage key of the state directory (its file's, or its key vault's).
    static func verify(_ connection: Connection, path: String, key: StoreSealingKey) throws -> StoreCopySummary {
        let version: Int32
        let applicationID: Int32
        do {
            applicationID = try integer(connection, "PRAGMA application_id").map { Int32(truncatingIfNeeded: $0) } ?? 0
            version = try integer(connection, "PRAGMA user_version").map { Int32(truncatingIfNeeded: $0) } ?? 0
        } catch let error as SQLiteError {
            throw StoreBackupError.notADatabase(path: path, reason: error.message)
        }
        guard applicationID == StoreSchema.applicationID else {
            throw StoreBackupError.notAnOpenCarKeyStore(path: path, detail: "application_id \(applicationID)")
        }
        guard version > 0 else { throw StoreBackupError.notAnOpenCarKeyStore(path: path, detail: "no schema") }
        guard version <= StoreSchema.schema.latestVersion else {
            throw StoreBackupError.schemaTooNew(path: path, found: version, supported: StoreSchema.schema.latestVersion)
        }
        let findings: [String]
        do {
            findings = try connection.rows("PRAGMA integrity_check").map { row in
                if case .text(let line)? = row.first { return line }
                return "unexpected integrity_check row"
            }
        } catch let error as SQLiteError {
            throw StoreBackupError.damaged(path: path, findings: [error.message])
        }
        guard findings == ["ok"] else { throw StoreBackupError.damaged(path: path, findings: findings) }
        do {
            let identity = try identityKeyID(connection, path: path, key: key)
            return StoreCopySummary(
                schemaVersion: version,
                keys: Int(try integer(connection, "SELECT COUNT(*) FROM sealed_records WHERE kind = 'key'") ?? 0),
                sealedRecords: Int(try integer(connection, "SELECT COUNT(*) FROM sealed_records") ?? 0),
                events: Int(try integer(connection, "SELECT COUNT(*) FROM events") ?? 0),
                lastEventSequence: try integer(connection, "SELECT value FROM counters WHERE name = 'event_seq'") ?? 0,
                identity: identity)
        } catch let error as SQLiteError {
            // A table the queries need is gone: the copy is not a whole store.
            throw StoreBackupError.notAnOpenCarKeyStore(path: path, detail: error.message)
        }
    }

    /// Opens the identity row with `key`; its public key's ID. A car whose identity lives in
    /// its key vault has no identity row: its advertising-key row must open instead, and the
    /// identity is the device's.
    private static func identityKeyID(_ connection: Connection, path: String, key: StoreSealingKey) throws -> KeyID {
        let refused = key.vaultKind.map { StoreBackupError.vaultKeyDoesNotOpen(path: path, vault: $0) }
            ?? StoreBackupError.identityDoesNotOpen(path: path, storageKeyPath: key.keyPath)
        let sealer = try RecordSealer(key: key.key)
        if let value = try sealedIdentityRow(connection, id: CarStore.identityRecordID) {
            guard case .blob(let sealed) = value else { throw refused }
            do {
                var der = try sealer.open(sealed, kind: .identity, id: CarStore.identityRecordID)
                defer { ConstantTime.wipe(&der) }
                return KeyID(publicKey: try P256PrivateKey(pkcs8DER: der).publicKey)
            } catch {
                throw refused
            }
        }
        // The advertising-key row first: one that does not open is another car's store (for
        // instance a car whose identity is in its vault, restored into a car that has none),
        // which is what the operator must hear, not that the identity is missing.
        guard let value = try sealedIdentityRow(connection, id: CarStore.advertisingKeyRecordID) else {
            throw StoreBackupError.identityMissing(path: path)
        }
        guard case .blob(let sealed) = value,
              (try? sealer.open(sealed, kind: .identity, id: CarStore.advertisingKeyRecordID)) != nil else { throw refused }
        guard let device = key.deviceIdentity else { throw StoreBackupError.identityMissing(path: path) }
        return device
    }

    private static func sealedIdentityRow(_ connection: Connection, id: Bytes) throws -> SQLiteValue? {
        try connection.scalar("SELECT sealed FROM sealed_records WHERE kind = ?1 AND id = ?2",
                              [.text(RecordKind.identity.rawValue), .blob(id)])
    }

    private static func integer(_ connection: Connection, _ sql: String) throws -> Int64? {
        guard case .integer(let value)? = try connection.scalar(sql) else { return nil }
        return value
    }
}

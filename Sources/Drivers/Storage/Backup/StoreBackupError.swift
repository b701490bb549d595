// Everything `carkey-agent backup` and `restore` refuse, typed, each message saying what to do.
// Messages name paths, versions and counts, never a key or a record. StoreBackup.write and
// StoreRestore.restore throw them wrapped, as `StorageError.backup`.

public enum StoreBackupError: Error, Equatable, Sendable, CustomStringConvertible {
    /// There is no carkey.db to back up in the state directory.
    case noStore(directory: String)
    /// The output would land inside the state directory (it could replace the live store).
    case outputInsideStateDirectory(output: String, directory: String)
    /// SQLite cannot read the file as a database (not SQLite, truncated, encrypted by something else).
    case notADatabase(path: String, reason: String)
    /// A SQLite database, but not an OpenCarKey store (another application_id, or no schema).
    case notAnOpenCarKeyStore(path: String, detail: String)
    /// Written by a newer carkey-agent: this one would not know its tables.
    case schemaTooNew(path: String, found: Int32, supported: Int32)
    /// PRAGMA integrity_check found damage (the first findings).
    case damaged(path: String, findings: [String])
    /// The copy holds no car identity: restoring it would start a car no phone knows.
    case identityMissing(path: String)
    /// The identity does not open with the storage key in the state directory: the copy comes
    /// from another car (or the key file was replaced), or the row was altered.
    case identityDoesNotOpen(path: String, storageKeyPath: String)
    /// The state directory has no storage key: nothing sealed in a backup can be opened.
    case storageKeyMissing(storageKeyPath: String)
    /// The copy's records are not sealed by this state directory's key vault (issue 18).
    case vaultKeyDoesNotOpen(path: String, vault: String)
    /// A running agent (or another process) serves this state directory.
    case agentRunning(directory: String, socket: String)
    /// The state directory belongs to another user: the agent would refuse the restored file.
    case wrongUser(directory: String, owner: UInt32, user: UInt32)
    /// A write-ahead log lies beside the file to restore: the commits in it would be lost.
    case walBesideBackup(path: String, walBytes: Int64)

    public var description: String {
        switch self {
        case .noStore(let directory):
            return "no car store in \(directory) (carkey.db not found)"
        case .outputInsideStateDirectory(let output, let directory):
            return "\(output) is inside the state directory \(directory): write the backup somewhere else"
        case .notADatabase(let path, let reason):
            return "\(path) is not a readable SQLite database (\(reason)): not an OpenCarKey store backup"
        case .notAnOpenCarKeyStore(let path, let detail):
            return "\(path) is not an OpenCarKey store (\(detail))"
        case .schemaTooNew(let path, let found, let supported):
            return "\(path) has store schema version \(found), newer than this carkey-agent supports (\(supported)): "
                + "restore it with the carkey-agent version that wrote it, or a newer one"
        case .damaged(let path, let findings):
            return "\(path) fails SQLite's integrity check (\(findings.prefix(3).joined(separator: "; "))): use another backup"
        case .identityMissing(let path):
            return "\(path) holds no car identity: it is not a complete store of a paired car"
        case .identityDoesNotOpen(let path, let keyPath):
            return "the car identity in \(path) does not open with the storage key \(keyPath): the records of a store are sealed "
                + "with the storage key of the car it was taken from, so this backup belongs to another car or another key "
                + "(or was altered). Restore the store and its own storage key together: stop the agent, put that car's "
                + "storage key file in place as \(keyPath) (mode 0600, the agent's user), then run restore again"
        case .storageKeyMissing(let keyPath):
            return "\(keyPath) is missing: the records in a backup are sealed with the car's storage key, which is not in the "
                + "backup. Restore the store and its storage key together: put the key file kept with the backup in place as "
                + "\(keyPath) (mode 0600, the agent's user), then run restore again"
        case .vaultKeyDoesNotOpen(let path, let vault):
            return "the records in \(path) are not sealed by this \(vault) key vault's storage key: a backup of a car on a \(vault) "
                + "vault opens only with the same device (the same TPM or token) and the vault files that were in its state "
                + "directory when it was taken (tpm2-storage.*, tpm2-identity.* or pkcs11-storage.key). Put those files back, "
                + "on the board the backup came from, then run restore again (docs/operations.md, key vaults)"
        case .agentRunning(let directory, let socket):
            return "an agent is running on \(directory) (\(socket) answers): stop it first (systemctl stop carkey-agent), then restore"
        case .wrongUser(let directory, let owner, let user):
            return "\(directory) belongs to uid \(owner), not to this user (uid \(user)): run restore as the store's owner "
                + "(e.g. sudo -u opencarkey carkey-agent restore ...), or the agent would refuse the restored file"
        case .walBesideBackup(let path, let bytes):
            return "\(path)-wal (\(bytes) bytes) lies beside \(path): commits in it are not in \(path) alone. "
                + "Make backups with `carkey-agent backup`, which writes one complete file"
        }
    }
}

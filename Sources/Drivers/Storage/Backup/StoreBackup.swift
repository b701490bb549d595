// `carkey-agent backup`: one complete, consistent file of the car's store, taken while the
// agent runs. SQLite's online backup API copies one snapshot through the WAL (a copy of
// carkey.db alone can miss every commit still in carkey.db-wal: a car with no keys and no
// identity). The copy is written to a 0600 staging file beside the output, switched to a
// rollback journal so it is one self-contained file, checked (integrity, this car's identity
// opening with this car's storage key), fsynced and only then renamed into place.
//
// The storage key is not in the backup (it seals every record in it): it must be kept too,
// secret and apart (docs/operations.md section 3).
#if canImport(Glibc)
import Glibc
#endif
import CSQLite
import Protocol

public enum StoreBackup {
    /// Writes a checked backup of the store in `stateDirectory` to `output`; what it holds.
    /// `vault`: the key vault the store is sealed by (issue 18); nil for DIR/storage.key.
    public static func write(stateDirectory path: String, to output: String,
                             vault: (any CarKeyVault)? = nil) throws(StorageError) -> StoreCopySummary { try StorageError.wrap {
            let directory = StateDirectory(path: path)
            guard BackupFiles.size(directory.databasePath) != nil else { throw StoreBackupError.noStore(directory: directory.path) }
            // An output in the state directory could be renamed over the live carkey.db.
            if let stateFolder = BackupFiles.realPath(directory.path), let outputFolder = BackupFiles.realFolder(of: output),
               outputFolder == stateFolder || outputFolder.hasPrefix(stateFolder + "/") {
                throw StoreBackupError.outputInsideStateDirectory(output: output, directory: directory.path)
            }
            var key = try BackupFiles.sealingKey(directory, vault: vault)
            defer { key.wipe() }

            let source = try Connection(path: directory.databasePath, create: false)
            defer { source.close() }
            // The last connection to close must not delete the WAL the agent keeps for its room.
            source.keepWALOnClose()
            try source.setBusyTimeout(Database.defaultBusyTimeoutMillis)
            try source.execute("PRAGMA trusted_schema = OFF")
            try source.execute("PRAGMA query_only = ON")

            let staging = output + ".tmp-\(getpid())"
            try BackupFiles.createStaging(staging)
            do {
                let summary = try copy(source, to: staging, key: key, label: output)
                try BackupFiles.sync(staging)
                try BackupFiles.publish(staging, as: output)
                return summary
            } catch {
                BackupFiles.removeStaging(staging)
                throw error
            }
        }
    }

    /// The snapshot into `staging`, made self-contained and checked.
    private static func copy(_ source: Connection, to staging: String, key: StoreSealingKey, label: String) throws -> StoreCopySummary {
        let copy = try Connection(path: staging, create: false)
        defer { copy.close() }
        try source.backup(into: copy)
        // The pages came from a WAL database: switch the copy to a rollback journal, so the
        // backup is one file that needs no -wal beside it (the agent turns WAL on again).
        guard case .text(let mode)? = try copy.scalar("PRAGMA journal_mode = DELETE"), mode.lowercased() == "delete" else {
            throw SQLiteError(code: SQLITE_ERROR, message: "journal_mode of the copy is not DELETE", operation: "backup \(label)")
        }
        return try StoreCopyCheck.verify(copy, path: label, key: key)
    }
}

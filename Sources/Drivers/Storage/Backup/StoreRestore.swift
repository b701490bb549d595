// `carkey-agent restore`: puts a backup in place of the car's store, with the agent stopped
// (the caller checks that; see RestoreCommand). The file is copied to a staging file in the
// state directory and checked there, the copy that will be used: an OpenCarKey store of a
// schema this code knows, intact, holding a car identity that opens with the storage key of
// this state directory. Only then is the current store set aside and the copy renamed over
// carkey.db in one step.
//
// Order matters with WAL: the old carkey.db-wal must be gone before the new carkey.db appears,
// or SQLite could replay the old car's log into the restored file. So the old store is first
// checkpointed (its WAL folded into carkey.db, when it still opens), hard-linked aside as
// carkey.db.before-restore (with its -wal, if that still holds anything), its companions are
// removed, and last the staging file is renamed over carkey.db. A crash at any point leaves
// the old store or the restored one, and the old one also under its new name.
#if canImport(Glibc)
import Glibc
#endif
import Protocol

public enum StoreRestore {
    /// What a restore did.
    public struct Outcome: Equatable, Sendable {
        public let summary: StoreCopySummary
        /// Where the replaced store now is (nil when there was none).
        public let previousStore: String?
    }

    static let stagingName = "carkey.db.restoring"
    static let asideName = "carkey.db.before-restore"

    /// Restores `backup` into `stateDirectory`. The agent must not be running.
    /// `vault`: the key vault the car's store is sealed by (issue 18); nil for DIR/storage.key.
    public static func restore(stateDirectory path: String, from backup: String,
                               vault: (any CarKeyVault)? = nil) throws(StorageError) -> Outcome { try StorageError.wrap {
            let directory = StateDirectory(path: path)
            try checkOwner(directory)
            var key = try BackupFiles.sealingKey(directory, vault: vault)
            defer { key.wipe() }
            guard BackupFiles.size(backup) != nil else { throw Errno(ENOENT, "open \(backup)") }
            // A cold copy of a WAL database needs its -wal: without it the newest commits are gone.
            if let walBytes = BackupFiles.size(backup + "-wal"), walBytes > 0 {
                throw StoreBackupError.walBesideBackup(path: backup, walBytes: walBytes)
            }

            let staging = directory.path + "/" + stagingName
            try BackupFiles.createStaging(staging)
            let summary: StoreCopySummary
            do {
                try BackupFiles.copy(backup, into: staging)
                summary = try check(staging, label: backup, key: key)
                // Checking may have created companions (a copy in WAL mode); SQLite removes them
                // when the last connection closes, this makes sure.
                for sidecar in BackupFiles.sidecars(of: staging) { unlink(sidecar) }
                try BackupFiles.sync(staging)
            } catch {
                BackupFiles.removeStaging(staging)
                throw error
            }
            let previous = try setAside(directory)
            do {
                try BackupFiles.publish(staging, as: directory.databasePath)
            } catch {
                BackupFiles.removeStaging(staging)
                throw error
            }
            return Outcome(summary: summary, previousStore: previous)
        }
    }

    private static func check(_ staging: String, label: String, key: StoreSealingKey) throws -> StoreCopySummary {
        let connection: Connection
        do {
            connection = try Connection(path: staging, create: false)
        } catch let error as SQLiteError {
            throw StoreBackupError.notADatabase(path: label, reason: error.message)
        }
        defer { connection.close() }
        try connection.execute("PRAGMA trusted_schema = OFF")
        return try StoreCopyCheck.verify(connection, path: label, key: key)
    }

    /// Moves the current store out of the way under a free "carkey.db.before-restore[.N]"
    /// name; returns that name, or nil when there was no store.
    private static func setAside(_ directory: StateDirectory) throws -> String? {
        let database = directory.databasePath
        let wal = database + "-wal"
        guard BackupFiles.size(database) != nil || BackupFiles.size(wal) != nil else { return nil }
        checkpoint(database)
        var aside = directory.path + "/" + asideName
        var number = 0
        while BackupFiles.size(aside) != nil || BackupFiles.size(aside + "-wal") != nil {
            number += 1
            aside = directory.path + "/" + asideName + ".\(number)"
        }
        // Links, not renames: until the final rename carkey.db stays where it was.
        if BackupFiles.size(database) != nil, link(database, aside) != 0 { throw Errno.current("link \(database) to \(aside)") }
        // SQLite pairs "X-wal" with "X", so the aside store keeps its own log.
        if let walBytes = BackupFiles.size(wal), walBytes > 0, link(wal, aside + "-wal") != 0 {
            throw Errno.current("link \(wal) to \(aside)-wal")
        }
        try Files.syncDirectory(of: database)
        for sidecar in directory.sidecarPaths where unlink(sidecar) != 0 && errno != ENOENT {
            throw Errno.current("remove \(sidecar)")
        }
        return aside
    }

    /// Folds the old store's WAL into its main file, when SQLite can still open it (a garbage
    /// or truncated store cannot be, and is kept aside as it is).
    private static func checkpoint(_ database: String) {
        guard let connection = try? Connection(path: database, create: false) else { return }
        defer { connection.close() }
        try? connection.execute("PRAGMA trusted_schema = OFF")
        try? connection.execute("PRAGMA wal_checkpoint(TRUNCATE)")
    }

    /// The restored file is created by this process: as another user than the directory's
    /// owner, the agent would refuse it (and root would leave a root-owned store).
    private static func checkOwner(_ directory: StateDirectory) throws {
        var info = stat()
        guard stat(directory.path, &info) == 0 else { throw Errno.current("stat \(directory.path)") }
        guard info.st_mode & S_IFMT == S_IFDIR else { throw StorageError.notADirectory(path: directory.path) }
        guard info.st_uid == geteuid() else {
            throw StoreBackupError.wrongUser(directory: directory.path, owner: UInt32(info.st_uid), user: UInt32(geteuid()))
        }
    }
}

// Everything the sealed store can refuse, typed. Messages name paths, modes, record kinds and
// record IDs (public key IDs and serials), never a key, a payload or a sealed blob.
import Protocol

public enum StorageError: Error, Equatable, Sendable, CustomStringConvertible {
    /// The state directory path exists but is not a directory.
    case notADirectory(path: String)
    /// A state file or directory belongs to another user: refused, because that user could
    /// read or replace what we store (we do not chown, that would hide the problem).
    case ownedByAnotherUser(path: String, owner: UInt32)
    /// A state file that must be a regular file is something else (a symlink, a FIFO, ...).
    case notARegularFile(path: String)
    /// A secret file readable or writable by group or others: refused, not repaired, because
    /// the secret may already have been copied.
    case insecurePermissions(path: String, mode: UInt32)
    /// The storage key file does not hold exactly 32 bytes.
    case invalidStorageKey(path: String, length: Int)
    /// The storage key is missing while the database already holds sealed records: minting a
    /// new key would make every record unreadable, so an operator must restore the key.
    case storageKeyMissing(path: String)
    /// A key provider returned a key of the wrong size.
    case invalidStorageKeyLength(Int)
    /// A sealed record failed authentication: edited, truncated, swapped or under another key.
    /// It has been reported as a "tamper detected" event and must not be used.
    case tampered(kind: RecordKind, id: Bytes)
    /// A caller passed an argument the store does not accept (empty payload, bad kind or ID).
    case invalidArgument(String)
    /// The store holds no car identity although the state directory is not fresh (its storage
    /// key was already there): the database was truncated, replaced or lost its WAL. A new
    /// identity would lock out every paired phone, so it is not created.
    case identityMissing(stateDirectory: String)
    /// The key vault's storage key does not open the store's records (issue 18): the store was
    /// sealed by another key (the file key before a migration, another device), or the vault's
    /// key blob was replaced.
    case storageKeyDoesNotOpenStore(provider: String, stateDirectory: String)
    /// A system call failed.
    case system(Errno)
    /// SQLite refused (busy, full disk, corrupt file, a trigger's refusal...); the cause is kept
    /// whole so callers can still test `isCorrupt`, `isBusy` or the result code.
    case sqlite(SQLiteError)
    /// The database's schema is newer than this code, or the file belongs to another application.
    case migration(MigrationError)
    /// `carkey-agent backup` or `restore` refused (what to do is in the message).
    case backup(StoreBackupError)
    /// The state directory's path goes through a symbolic link.
    case symlinkedStateDirectory(SymlinkedStateDirectory)
    /// A JSON document handed to the audit verifier is malformed.
    case auditJSON(AuditJSONError)
    /// A key provider (or another injected piece) failed with an error of its own; its text.
    case external(String)

    public var description: String {
        switch self {
        case .notADirectory(let path): return "\(path): not a directory"
        case .ownedByAnotherUser(let path, let owner): return "\(path): owned by uid \(owner), not by this user; refusing to use it"
        case .notARegularFile(let path): return "\(path): not a regular file"
        case .insecurePermissions(let path, let mode):
            return "\(path): mode \(String(mode, radix: 8)) lets other users in; expected 600"
        case .invalidStorageKey(let path, let length): return "\(path): storage key must be 32 bytes, found \(length)"
        case .storageKeyMissing(let path):
            return "\(path) is missing but the database holds sealed records; restore the key file instead of creating a new one"
        case .invalidStorageKeyLength(let length): return "storage key must be 32 bytes, key provider returned \(length)"
        case .tampered(let kind, let id): return "sealed \(kind.rawValue) record \(id.hexString) failed authentication (tampered)"
        case .invalidArgument(let what): return "invalid argument: \(what)"
        case .identityMissing(let directory):
            return "the store in \(directory) has no car identity, but its storage key exists: carkey.db was truncated, "
                + "replaced or lost its WAL, and the car's keys went with it"
        case .storageKeyDoesNotOpenStore(let provider, let directory):
            return "the \(provider) key vault's storage key does not open the store in \(directory): it is sealed by another key "
                + "(still the storage.key file: run `carkey-agent vault migrate`; or another board's device, or the vault's key blob was replaced)"
        case .system(let errno): return errno.description
        case .sqlite(let error): return error.description
        case .migration(let error): return error.description
        case .backup(let error): return error.description
        case .symlinkedStateDirectory(let error): return error.description
        case .auditJSON(let error): return error.description
        case .external(let text): return text
        }
    }
}

extension StorageError {
    /// Any error met inside the storage layer as a `StorageError`, wrapping the known causes
    /// (so their messages read as before) and keeping the text of anything else.
    public init(_ error: any Error) {
        switch error {
        case let error as StorageError: self = error
        case let error as SQLiteError: self = .sqlite(error)
        case let error as MigrationError: self = .migration(error)
        case let error as StoreBackupError: self = .backup(error)
        case let error as Errno: self = .system(error)
        case let error as SymlinkedStateDirectory: self = .symlinkedStateDirectory(error)
        case let error as AuditJSONError: self = .auditJSON(error)
        default: self = .external("\(error)")
        }
    }

    /// Runs `body`, the inside of a public storage call, and throws what fails as a StorageError.
    /// The layers below (SQLite wrapper, migrations, backup checks) keep their own error types;
    /// this is where they are wrapped, once, at the public boundary.
    static func wrap<T>(_ body: () throws -> T) throws(StorageError) -> T {
        do { return try body() } catch { throw StorageError(error) }
    }

    /// The SQLite failure behind this error, if that is what it is.
    public var sqliteError: SQLiteError? {
        if case .sqlite(let error) = self { return error }
        return nil
    }
}

// The state directory and the files in it, with their permissions enforced on every open.
//
//   DIR/               0700, owned by this user
//   DIR/carkey.db      0600  SQLite database (sealed records, event log, trusted time)
//   DIR/carkey.db-wal  0600  SQLite write-ahead log  } created by SQLite with the database's
//   DIR/carkey.db-shm  0600  SQLite shared memory    } mode, which is why carkey.db is pre-created
//   DIR/storage.key    0600  the 32-byte storage key (FileKeyProvider); back it up apart from the DB, kept secret
//   DIR/storage.key.provisional  a first start's key until the identity it seals is stored
//
// Policy: anything owned by another user is refused (that user could read or swap it, and
// chown would hide the problem). A directory or database with loose permissions is repaired to
// 0700/0600 and the repair is returned, so the caller can log it: its contents are sealed or
// non-secret, and refusing would only keep the car shut. The storage key is stricter: see
// FileKeyProvider.
#if canImport(Glibc)
import Glibc
#endif

/// A permission fixed while opening the store.
public struct PermissionRepair: Equatable, Sendable, CustomStringConvertible {
    public let path: String
    public let oldMode: UInt32
    public let newMode: UInt32

    public var description: String { "\(path): mode \(String(oldMode, radix: 8)) repaired to \(String(newMode, radix: 8))" }
}

public struct StateDirectory: Sendable {
    public static let databaseFileName = "carkey.db"
    public static let storageKeyFileName = "storage.key"
    static let directoryMode: mode_t = 0o700
    static let fileMode: mode_t = 0o600

    public let path: String

    public var databasePath: String { path + "/" + Self.databaseFileName }
    public var storageKeyPath: String { path + "/" + Self.storageKeyFileName }
    /// SQLite's companion files, which hold database pages too.
    public var sidecarPaths: [String] { ["-wal", "-shm", "-journal"].map { databasePath + $0 } }

    public init(path: String) {
        // A trailing slash would double up in the file paths.
        var trimmed = path
        while trimmed.count > 1 && trimmed.hasSuffix("/") { trimmed.removeLast() }
        self.path = trimmed
    }

    /// Creates the directory if missing, checks ownership and modes of everything in it, and
    /// pre-creates an empty carkey.db with mode 0600 (see the layout above). Returns repairs.
    public func prepare() throws(StorageError) -> [PermissionRepair] { try StorageError.wrap {
            try Self.refuseSymlinks(in: path)
            var repairs = [PermissionRepair]()
            if let info = try Self.status(path, followLinks: true) {
                guard info.st_mode & S_IFMT == S_IFDIR else { throw StorageError.notADirectory(path: path) }
                try Self.checkOwner(info, path)
                if let repair = try Self.repairMode(info, path, to: Self.directoryMode) { repairs.append(repair) }
            } else {
                do { try Files.ensureDirectory(path, mode: Self.directoryMode) } catch let error as Errno { throw StorageError.system(error) }
            }
            if try Self.status(databasePath, followLinks: false) == nil {
                try createEmptyDatabaseFile()
            }
            repairs += try checkDatabaseFiles()
            return repairs
        }
    }

    /// Checks carkey.db and its sidecars: regular files, ours, mode 0600 (repaired if looser).
    /// Run again after SQLite has opened the database, since it creates the sidecars.
    public func checkDatabaseFiles() throws(StorageError) -> [PermissionRepair] { try StorageError.wrap {
            var repairs = [PermissionRepair]()
            for file in [databasePath] + sidecarPaths {
                guard let info = try Self.status(file, followLinks: false) else { continue }
                guard info.st_mode & S_IFMT == S_IFREG else { throw StorageError.notARegularFile(path: file) }
                try Self.checkOwner(info, file)
                if let repair = try Self.repairMode(info, file, to: Self.fileMode) { repairs.append(repair) }
            }
            return repairs
        }
    }

    private func createEmptyDatabaseFile() throws {
        let fd: FileDescriptor
        do {
            fd = try FileDescriptor.open(databasePath, O_WRONLY | O_CREAT | O_EXCL | O_NOFOLLOW, mode: Self.fileMode)
        } catch {
            // A switch, not `catch let error as Errno where`: Swift 6.0 (the aarch64 toolchain)
            // crashes on that pattern after a typed throw (see FileKeyProvider.readKey).
            // EEXIST: another process created it first; the checks that follow apply to it.
            guard error.rawValue == EEXIST else { throw StorageError.system(error) }
            return
        }
        defer { fd.close() }
        // The umask may have narrowed the mode; SQLite copies this file's mode to the WAL and SHM.
        guard fchmod(fd.rawValue, Self.fileMode) == 0 else { throw StorageError.system(.current("chmod \(databasePath)")) }
    }

    /// Refuses a state directory reached through a symbolic link (the directory itself or a
    /// folder above it). SQLite opens the database with SQLITE_OPEN_NOFOLLOW, which refuses any
    /// symlink in the path with a bare "unable to open database file" (code 14); and following
    /// one would let whoever can re-point it swap the car's store. So it is refused here, naming
    /// the link, its target and the real path to use instead: not resolved silently.
    public static func refuseSymlinks(in path: String) throws(StorageError) { try StorageError.wrap {
            var prefix = path.hasPrefix("/") ? "" : "."
            for component in path.split(separator: "/") where component != "." {
                prefix += (prefix == "/" ? "" : "/") + component
                var info = stat()
                guard lstat(prefix, &info) == 0 else { return }  // missing: created later, no link in it
                guard info.st_mode & S_IFMT == S_IFLNK else { continue }
                throw SymlinkedStateDirectory(directory: path, link: prefix, target: linkTarget(prefix), realPath: realPath(path))
            }
        }
    }

    private static func linkTarget(_ path: String) -> String {
        var buffer = [CChar](repeating: 0, count: Int(PATH_MAX) + 1)
        let count = readlink(path, &buffer, buffer.count - 1)
        guard count >= 0 else { return "?" }
        return String(decoding: buffer.prefix(count).map { UInt8(bitPattern: $0) }, as: UTF8.self)
    }

    private static func realPath(_ path: String) -> String? {
        guard let resolved = realpath(path, nil) else { return nil }
        defer { free(resolved) }
        return String(cString: resolved)
    }

    /// stat or lstat; nil when the path does not exist.
    static func status(_ path: String, followLinks: Bool) throws -> stat? {
        var info = stat()
        let result = followLinks ? stat(path, &info) : lstat(path, &info)
        if result == 0 { return info }
        if errno == ENOENT { return nil }
        throw StorageError.system(.current("stat \(path)"))
    }

    static func checkOwner(_ info: stat, _ path: String) throws {
        guard info.st_uid == geteuid() else { throw StorageError.ownedByAnotherUser(path: path, owner: info.st_uid) }
    }

    private static func repairMode(_ info: stat, _ path: String, to mode: mode_t) throws -> PermissionRepair? {
        let current = info.st_mode & 0o7777
        guard current != mode else { return nil }
        guard chmod(path, mode) == 0 else { throw StorageError.system(.current("chmod \(path)")) }
        return PermissionRepair(path: path, oldMode: UInt32(current), newMode: UInt32(mode))
    }
}

/// The state directory's path goes through a symbolic link (see StateDirectory.refuseSymlinks).
public struct SymlinkedStateDirectory: Error, Equatable, Sendable, CustomStringConvertible {
    public let directory: String
    /// The component of `directory` that is a link (the directory itself or a parent).
    public let link: String
    public let target: String
    /// Where the link leads, when it resolves.
    public let realPath: String?

    public var description: String {
        let subject = link == directory || link == "./" + directory
            ? "state directory \(directory) is a symlink to \(target)"
            : "state directory \(directory): \(link) is a symlink to \(target)"
        let advice = realPath.map { "use the real path \($0)" } ?? "use the real path"
        return subject + ": \(advice) (symbolic links are refused: SQLite will not open a database through one)"
    }
}

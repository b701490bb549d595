// File steps shared by backup and restore: a private staging file next to its target, fsync,
// the atomic rename, and reading the state directory's storage key for the checks.
#if canImport(Glibc)
import Glibc
#endif
import Protocol

enum BackupFiles {
    /// SQLite's companion files of a database at `path`.
    static func sidecars(of path: String) -> [String] { ["-wal", "-shm", "-journal"].map { path + $0 } }

    /// Creates an empty file at `path` with mode 0600, removing a leftover of an earlier,
    /// interrupted run (and its SQLite companions) first: the name is ours.
    static func createStaging(_ path: String) throws {
        for leftover in [path] + sidecars(of: path) { unlink(leftover) }
        let fd = try FileDescriptor.open(path, O_WRONLY | O_CREAT | O_EXCL | O_NOFOLLOW, mode: 0o600)
        defer { fd.close() }
        // The umask may have narrowed the mode: set it exactly.
        guard fchmod(fd.rawValue, 0o600) == 0 else { throw Errno.current("chmod \(path)") }
    }

    /// Removes a staging file and its companions (after a failure).
    static func removeStaging(_ path: String) {
        for file in [path] + sidecars(of: path) { unlink(file) }
    }

    /// fsyncs the file's contents, so the rename that follows cannot expose an empty file.
    static func sync(_ path: String) throws {
        let fd = try FileDescriptor.open(path, O_RDONLY | O_NOFOLLOW)
        defer { fd.close() }
        try fd.sync()
    }

    /// Renames `staging` over `target` and fsyncs the folder: the target is the old file or
    /// the new one, whole, whatever happens.
    static func publish(_ staging: String, as target: String) throws {
        guard rename(staging, target) == 0 else { throw Errno.current("rename \(staging) to \(target)") }
        try Files.syncDirectory(of: target)
    }

    /// Copies `source`'s bytes into the (existing, empty) file `target`, then fsyncs it.
    static func copy(_ source: String, into target: String) throws {
        // O_NONBLOCK so a FIFO given as the backup cannot hang open(2); only a regular file is
        // copied (a FIFO, device or directory is refused by name).
        let input = try FileDescriptor.open(source, O_RDONLY | O_NONBLOCK | O_NOCTTY)
        defer { input.close() }
        var info = stat()
        guard fstat(input.rawValue, &info) == 0 else { throw Errno.current("stat \(source)") }
        guard info.st_mode & S_IFMT == S_IFREG else { throw StorageError.notARegularFile(path: source) }
        try input.setNonBlocking(false)
        let output = try FileDescriptor.open(target, O_WRONLY | O_TRUNC | O_NOFOLLOW)
        defer { output.close() }
        while true {
            let chunk = try input.read(upTo: 1 << 20)
            if chunk.isEmpty { break }
            try output.writeAll(chunk)
        }
        try output.sync()
    }

    /// Size in bytes, nil when `path` does not exist.
    static func size(_ path: String) -> Int64? {
        var info = stat()
        guard lstat(path, &info) == 0 else { return nil }
        return Int64(info.st_size)
    }

    /// The real path of the folder holding `path` (for "is it inside the state directory").
    static func realFolder(of path: String) -> String? {
        let folder: String
        if let slash = path.lastIndex(of: "/") {
            folder = slash == path.startIndex ? "/" : String(path[..<slash])
        } else {
            folder = "."
        }
        return realPath(folder)
    }

    static func realPath(_ path: String) -> String? {
        guard let resolved = realpath(path, nil) else { return nil }
        defer { free(resolved) }
        return String(cString: resolved)
    }

    /// The state directory's storage key; a missing file is the backup error that says how to
    /// restore a store and its key together. With a key vault (issue 18): the vault's storage
    /// key, and the device identity when the car's identity lives in the device (no identity
    /// row is stored for it).
    static func sealingKey(_ directory: StateDirectory, vault: (any CarKeyVault)?) throws -> StoreSealingKey {
        if let vault { return try vaultKey(vault) }
        let key: Bytes
        do {
            key = try FileKeyProvider(path: directory.storageKeyPath, mayCreate: false).storageKey()
        } catch {
            guard case .storageKeyMissing = error else { throw error }
            throw StoreBackupError.storageKeyMissing(storageKeyPath: directory.storageKeyPath)
        }
        return StoreSealingKey(key: key, keyPath: directory.storageKeyPath, vaultKind: nil, deviceIdentity: nil)
    }

    private static func vaultKey(_ vault: any CarKeyVault) throws -> StoreSealingKey {
        let key = try vault.storageKey()
        let identity = try vault.deviceIdentity(create: false)
        let device = identity.map { KeyID(publicKey: $0.publicKey) }
        return StoreSealingKey(key: key, keyPath: "the \(vault.kind) key vault's storage key", vaultKind: vault.kind, deviceIdentity: device)
    }}

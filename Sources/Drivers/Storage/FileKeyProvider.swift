// The default KeyProvider: a random 256-bit key in a 0600 file in the state directory. It
// protects against a copied or edited database, not against someone who can read the whole
// state directory as this user (a TPM or PKCS#11 provider closes that gap).
#if canImport(Glibc)
import Glibc
#endif
import Protocol

public struct FileKeyProvider: KeyProvider {
    public static let keyLength = 32

    public let path: String
    /// Whether a missing file may be replaced by a fresh key. `CarStore.open` turns this off
    /// when the database already holds sealed records, which a new key could never open.
    public let mayCreate: Bool
    private let random: RandomSource

    public init(path: String, mayCreate: Bool = true, random: RandomSource = SystemRandom()) {
        self.path = path
        self.mayCreate = mayCreate
        self.random = random
    }

    /// A new key is written here first and renamed to `path` only once the car identity it
    /// seals is stored (`promote`). So `path` existing means "this car has an identity": a
    /// store without one beside it was damaged, never new, while a first start killed before
    /// its identity was stored leaves only this file and simply starts over with it.
    public var provisionalPath: String { path + ".provisional" }

    /// Reads the key, creating it (provisionally) when missing and allowed. A file of the
    /// wrong size, not a regular file, not ours, or readable/writable by group or others is
    /// refused, never repaired: a key that may have been exposed or replaced must not be used
    /// silently.
    public func storageKey() throws(StorageError) -> Bytes { try StorageError.wrap {
            if let key = try readKey(at: path) { return key }
            // A first start that stopped before its identity was stored: the key that sealed
            // whatever it wrote.
            if let key = try readKey(at: provisionalPath) { return key }
            guard mayCreate else { throw StorageError.storageKeyMissing(path: path) }
            var fresh = try random.randomBytes(Self.keyLength)
            defer { ConstantTime.wipe(&fresh) }
            do {
                // Exclusive: two processes starting at once must not each mint a different key.
                try Files.writeAtomically(fresh, to: provisionalPath, mode: 0o600, exclusive: true)
            } catch let error as Errno where error.rawValue == EEXIST {
                // Lost the race: the winner's key is the key.
            } catch let error as Errno {
                throw StorageError.system(error)
            }
            guard let key = try readKey(at: provisionalPath) else { throw StorageError.storageKeyMissing(path: path) }
            return key
        }
    }

    /// Makes a provisional key the car's key (after the identity it seals is durable). Does
    /// nothing when the key is already final. The directory is synced so the rename survives
    /// a power cut.
    public func promote() throws(StorageError) { try StorageError.wrap {
            guard access(path, F_OK) != 0, access(provisionalPath, F_OK) == 0 else { return }
            guard rename(provisionalPath, path) == 0 else { throw StorageError.system(.current("rename \(provisionalPath)")) }
            let directory = String(path[..<(path.lastIndex(of: "/") ?? path.startIndex)])
            if let fd = try? FileDescriptor.open(directory.isEmpty ? "." : directory, O_RDONLY | O_DIRECTORY) {
                try? fd.sync()
                fd.close()
            }
        }
    }

    /// The key at `path`, or nil when the file does not exist.
    private func readKey(at path: String) throws -> Bytes? {
        let fd: FileDescriptor
        do {
            // O_NOFOLLOW: a symlink planted in place of the key is refused (ELOOP), not followed.
            // O_NONBLOCK: a FIFO planted there must not hang start-up in open(2); fstat below
            // refuses it (and O_NONBLOCK does not change reads of a regular file).
            fd = try FileDescriptor.open(path, O_RDONLY | O_NOFOLLOW | O_NONBLOCK | O_NOCTTY)
        } catch {
            // One catch and a switch: Swift 6.0 (the aarch64 toolchain) crashes in SIL
            // verification on `catch let error as Errno where ...` after a typed throw.
            switch error.rawValue {
            case ENOENT: return nil
            case ELOOP: throw StorageError.notARegularFile(path: path)
            default: throw StorageError.system(error)
            }
        }
        defer { fd.close() }
        // Check the opened file itself, so it cannot be swapped between check and read.
        var info = stat()
        guard fstat(fd.rawValue, &info) == 0 else { throw StorageError.system(.current("stat \(path)")) }
        guard info.st_mode & S_IFMT == S_IFREG else { throw StorageError.notARegularFile(path: path) }
        try StateDirectory.checkOwner(info, path)
        guard info.st_mode & 0o077 == 0 else { throw StorageError.insecurePermissions(path: path, mode: UInt32(info.st_mode & 0o7777)) }
        guard info.st_size == Self.keyLength else { throw StorageError.invalidStorageKey(path: path, length: Int(info.st_size)) }
        var key: Bytes
        do { key = try fd.read(upTo: Self.keyLength + 1) } catch let error as Errno { throw StorageError.system(error) }
        guard key.count == Self.keyLength else {
            let length = key.count
            ConstantTime.wipe(&key)
            throw StorageError.invalidStorageKey(path: path, length: length)
        }
        return key
    }
}

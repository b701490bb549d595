// The ballast file: DIR/reserve, real blocks allocated up front (posix_fallocate, never a
// sparse file). When the disk is full it is deleted, and the space it held is what SQLite uses
// to create its WAL at start-up and to commit revocations, enrollments and access decisions.
// It is allocated again once the file system has room for it and a margin.
#if canImport(Glibc)
import Glibc
#endif

struct StoreReserve: Sendable {
    static let fileName = "reserve"

    let path: String
    let directory: String
    let bytes: Int64

    init(directory: String, bytes: Int64) {
        self.directory = directory
        self.path = directory + "/" + Self.fileName
        self.bytes = bytes
    }

    /// True when our own regular file of the full size is in place.
    var isPresent: Bool {
        var info = stat()
        guard lstat(path, &info) == 0 else { return false }
        return info.st_mode & S_IFMT == S_IFREG && info.st_uid == geteuid() && Int64(info.st_size) >= bytes
    }

    /// Allocates the file under a temporary name and renames it into place, so a file that
    /// is there always has all its blocks. Throws the errno (ENOSPC when there is no room).
    func create() throws(Errno) {
        guard bytes > 0, !isPresent else { return }
        let temporary = path + ".new"
        unlink(temporary)
        let file = try FileDescriptor.open(temporary, O_WRONLY | O_CREAT | O_EXCL | O_NOFOLLOW)
        let code = posix_fallocate(file.rawValue, 0, off_t(bytes))
        let synced = Result { () throws(Errno) in if code == 0 { try file.sync() } }
        file.close()
        guard code == 0 else {
            unlink(temporary)
            throw Errno(code, "allocate \(bytes) bytes for \(path)")
        }
        if case .failure(let error) = synced {
            unlink(temporary)
            throw error
        }
        guard rename(temporary, path) == 0 else {
            let error = Errno.current("install \(path)")
            unlink(temporary)
            throw error
        }
    }

    /// Deletes the file; true when there was one to give back. Only our own regular file is
    /// removed (never what a symlink points to; unlink removes the link itself anyway).
    @discardableResult
    func release() -> Bool {
        var info = stat()
        guard lstat(path, &info) == 0, info.st_mode & S_IFMT == S_IFREG, info.st_uid == geteuid() else { return false }
        return unlink(path) == 0
    }

    /// Bytes an unprivileged writer may still allocate on the state directory's file system
    /// (f_bavail: root's reserved blocks do not count, the agent should not rely on them).
    static func freeBytes(in directory: String) -> Int64? {
        var info = statvfs()
        guard statvfs(directory, &info) == 0 else { return nil }
        return Int64(info.f_bavail) * Int64(info.f_frsize)
    }
}

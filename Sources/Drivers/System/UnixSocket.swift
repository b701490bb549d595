// Unix-domain stream sockets: a listener bound to a path with an exact mode, and a client
// connection. Addresses are checked for length instead of being silently truncated.
#if canImport(Glibc)
import Glibc
// bluetooth.h pulls <sys/socket.h> in textually, so in a whole-module (release) build the
// socket constants (SOCK_STREAM, MSG_NOSIGNAL) may be owned by CBluetooth's module, not Glibc:
// import it here so they stay visible whichever header the compiler saw first.
import CBluetooth
#endif

public enum UnixSocket {
    /// Longest path a sockaddr_un holds, without the terminating NUL (107 on Linux).
    public static let maxPathLength = MemoryLayout.size(ofValue: sockaddr_un().sun_path) - 1

    /// A non-blocking listener on `path`, created with `mode` (no window with a looser mode).
    /// A stale socket file left by a dead process is replaced; a live listener (one that accepts
    /// a connection) or any other kind of file at `path` is an error, never deleted.
    public static func listen(path: String, mode: mode_t = 0o600, backlog: Int32 = 16) throws(Errno) -> FileDescriptor {
        try removeStaleSocket(at: path)
        var (address, length) = try socketAddress(path)
        let fd = try makeSocket(nonBlocking: true, path: path)
        do throws(Errno) {
            // bind(2) creates the file with 0777 & ~umask: narrow the umask around it.
            let saved = umask(~mode & 0o777)
            let bound = withUnsafePointer(to: &address) {
                $0.withMemoryRebound(to: sockaddr.self, capacity: 1) { bind(fd.rawValue, $0, length) }
            }
            umask(saved)
            guard bound == 0 else { throw Errno.current("bind \(path)") }
            guard chmod(path, mode) == 0 else { throw Errno.current("chmod \(path)") }
            guard Glibc.listen(fd.rawValue, backlog) == 0 else { throw Errno.current("listen \(path)") }
            return fd
        } catch {
            fd.close()
            throw error
        }
    }

    /// A blocking connection to the listener at `path`. A Unix-domain connect completes or
    /// fails at once (ECONNREFUSED when nobody listens, EAGAIN when the backlog is full).
    public static func connect(path: String) throws(Errno) -> FileDescriptor {
        var (address, length) = try socketAddress(path)
        let fd = try makeSocket(nonBlocking: false, path: path)
        let result = withUnsafePointer(to: &address) {
            $0.withMemoryRebound(to: sockaddr.self, capacity: 1) { Glibc.connect(fd.rawValue, $0, length) }
        }
        guard result == 0 else {
            let failure = Errno.current("connect \(path)")
            fd.close()
            throw failure
        }
        return fd
    }

    /// The inode of the socket file at `path`, or nil when there is none: lets a listener
    /// remove its own socket at shutdown and leave a successor's alone.
    public static func inode(of path: String) -> UInt64? {
        var info = stat()
        guard lstat(path, &info) == 0, info.st_mode & S_IFMT == S_IFSOCK else { return nil }
        return UInt64(info.st_ino)
    }

    /// Unlinks a socket file (missing is fine).
    public static func remove(_ path: String) {
        _ = unlink(path)
    }

    /// Removes `path` if it is a socket nobody listens on. Missing is fine.
    static func removeStaleSocket(at path: String) throws(Errno) {
        var info = stat()
        guard lstat(path, &info) == 0 else {
            if errno == ENOENT { return }
            throw Errno.current("stat \(path)")
        }
        guard info.st_mode & S_IFMT == S_IFSOCK else { throw Errno(EEXIST, "\(path) exists and is not a socket") }
        if let live = try? connect(path: path) {
            live.close()
            throw Errno(EADDRINUSE, "another process is listening on \(path)")
        }
        guard unlink(path) == 0 || errno == ENOENT else { throw Errno.current("remove stale socket \(path)") }
    }

    private static func makeSocket(nonBlocking: Bool, path: String) throws(Errno) -> FileDescriptor {
        var type = Int32(SOCK_STREAM.rawValue) | Int32(SOCK_CLOEXEC.rawValue)
        if nonBlocking { type |= Int32(SOCK_NONBLOCK.rawValue) }
        let raw = socket(AF_UNIX, type, 0)
        guard raw >= 0 else { throw Errno.current("socket for \(path)") }
        return FileDescriptor(rawValue: raw)
    }

    /// The sockaddr_un for `path` and its length; ENAMETOOLONG when it does not fit.
    private static func socketAddress(_ path: String) throws(Errno) -> (sockaddr_un, socklen_t) {
        let bytes = Array(path.utf8)
        guard !bytes.isEmpty, bytes.count <= maxPathLength, !bytes.contains(0) else {
            throw Errno(ENAMETOOLONG, "socket path must be 1 to \(maxPathLength) bytes: \(path)")
        }
        var address = sockaddr_un()
        address.sun_family = sa_family_t(AF_UNIX)
        withUnsafeMutableBytes(of: &address.sun_path) { raw in
            raw.copyBytes(from: bytes)
            raw[bytes.count] = 0
        }
        return (address, socklen_t(MemoryLayout<sa_family_t>.size + bytes.count + 1))
    }
}

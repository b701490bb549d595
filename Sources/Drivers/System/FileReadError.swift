// Why Files.read refused a file it could open: what a person put at a config path is not a
// file the agent should read. Syscall failures stay Errno (ENOENT, EACCES keep their meaning).
#if canImport(Glibc)
import Glibc
#endif

public enum FileReadError: Error, Equatable, Sendable, CustomStringConvertible {
    /// A FIFO, socket, device or directory where a regular file was expected; `kind` says which.
    case notRegularFile(path: String, kind: String)
    /// More than `limit` bytes.
    case tooLarge(path: String, limit: Int)

    public var path: String {
        switch self {
        case .notRegularFile(let path, _), .tooLarge(let path, _): return path
        }
    }

    public var description: String {
        switch self {
        case .notRegularFile(let path, let kind): return "\(path) is \(kind), not a regular file"
        case .tooLarge(let path, let limit): return "\(path) is larger than the limit of \(limit) bytes"
        }
    }

    /// "a FIFO", "a directory", ... for the file type bits of `mode`.
    static func kindName(_ mode: mode_t) -> String {
        switch mode & S_IFMT {
        case S_IFIFO: return "a FIFO"
        case S_IFDIR: return "a directory"
        case S_IFCHR: return "a character device"
        case S_IFBLK: return "a block device"
        case S_IFSOCK: return "a socket"
        case S_IFLNK: return "a symbolic link"
        default: return "of an unknown type"
        }
    }
}

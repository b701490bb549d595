// Whole-file reads and crash-safe, permission-correct writes for keys and state.
#if canImport(Glibc)
import Glibc
#elseif canImport(Musl)
import Musl
#endif

public enum Files {
    /// Reads a whole file, refusing anything larger than `limit` bytes.
    public static func read(_ path: String, limit: Int = 1 << 20) throws -> [UInt8] {
        let fd = try FileDescriptor.open(path, O_RDONLY)
        defer { fd.close() }
        var out = [UInt8]()
        while true {
            let chunk = try fd.read(upTo: 65536)
            if chunk.isEmpty { return out }
            out += chunk
            if out.count > limit { throw Errno(EFBIG, "read \(path): larger than \(limit) bytes") }
        }
    }

    /// Writes `bytes` to `path` atomically with `mode`: a temporary file in the same folder is
    /// written, fsynced and renamed over the target, then the folder is fsynced. A crash leaves
    /// either the old file or the new one. With `exclusive`, an existing file is an error (EEXIST).
    public static func writeAtomically(_ bytes: [UInt8], to path: String, mode: mode_t = 0o600, exclusive: Bool = false) throws {
        if exclusive, access(path, F_OK) == 0 { throw Errno(EEXIST, "write \(path)") }
        let temporary = path + ".tmp-\(getpid())"
        let fd = try FileDescriptor.open(temporary, O_WRONLY | O_CREAT | O_TRUNC | O_NOFOLLOW, mode: mode)
        do {
            // The umask may have narrowed or the file may have pre-existed: set the mode exactly.
            guard fchmod(fd.rawValue, mode) == 0 else { throw Errno.current("chmod \(temporary)") }
            try fd.writeAll(bytes)
            try fd.sync()
            fd.close()
        } catch {
            fd.close()
            unlink(temporary)
            throw error
        }
        if exclusive {
            // link(2) fails if the target exists, closing the window between check and rename.
            guard link(temporary, path) == 0 else {
                let failure = Errno.current("write \(path)")
                unlink(temporary)
                throw failure
            }
            unlink(temporary)
        } else {
            guard rename(temporary, path) == 0 else {
                let failure = Errno.current("rename \(temporary) to \(path)")
                unlink(temporary)
                throw failure
            }
        }
        try syncDirectory(of: path)
    }

    /// fsyncs the folder holding `path`, so a rename or create survives a power cut.
    public static func syncDirectory(of path: String) throws {
        let folder: String
        if let slash = path.lastIndex(of: "/") {
            folder = slash == path.startIndex ? "/" : String(path[..<slash])
        } else {
            folder = "."
        }
        let fd = try FileDescriptor.open(folder, O_RDONLY | O_DIRECTORY)
        defer { fd.close() }
        try fd.sync()
    }

    /// Creates `path` (and its parents) with `mode` if missing, then enforces `mode` on it.
    public static func ensureDirectory(_ path: String, mode: mode_t = 0o700) throws {
        var prefix = path.hasPrefix("/") ? "" : "."
        for component in path.split(separator: "/") {
            prefix += "/" + component
            if mkdir(prefix, mode) != 0 && errno != EEXIST { throw Errno.current("mkdir \(prefix)") }
        }
        guard chmod(path, mode) == 0 else { throw Errno.current("chmod \(path)") }
    }

    /// The permission bits of `path`.
    public static func mode(of path: String) throws -> mode_t {
        var info = stat()
        guard stat(path, &info) == 0 else { throw Errno.current("stat \(path)") }
        return info.st_mode & 0o7777
    }
}

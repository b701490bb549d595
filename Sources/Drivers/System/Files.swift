// Whole-file reads and crash-safe, permission-correct writes for keys and state.
#if canImport(Glibc)
import Glibc
#endif

public enum Files {
    /// Reads a whole regular file, refusing anything larger than `limit` bytes: the one reader
    /// for every file a person or an installer provides (config, board, OTA config sets, CA and
    /// key files). The open never blocks: O_NONBLOCK stops a FIFO (or a tty, or a device)
    /// planted as a config file from hanging start-up in open(2) where no signal is looked at;
    /// fstat on the opened descriptor then refuses anything but a regular file, with no window
    /// for a swap between check and read. O_NONBLOCK is cleared before reading so the reads
    /// behave as usual. Throws FileReadError for what this adds, Errno for the syscalls.
    public static func read(_ path: String, limit: Int = 1 << 20) throws -> [UInt8] {
        let fd = try FileDescriptor.open(path, O_RDONLY | O_NONBLOCK | O_NOCTTY)
        defer { fd.close() }
        var info = stat()
        guard fstat(fd.rawValue, &info) == 0 else { throw Errno.current("stat \(path)") }
        guard info.st_mode & S_IFMT == S_IFREG else {
            throw FileReadError.notRegularFile(path: path, kind: FileReadError.kindName(info.st_mode))
        }
        // A size known up front is refused before any byte is read.
        guard info.st_size <= off_t(limit) else { throw FileReadError.tooLarge(path: path, limit: limit) }
        let flags = fcntl(fd.rawValue, F_GETFL)
        guard flags >= 0, fcntl(fd.rawValue, F_SETFL, flags & ~O_NONBLOCK) == 0 else {
            throw Errno.current("fcntl \(path)")
        }
        var out = [UInt8]()
        while true {
            // The bound holds even for a file that grows while it is read.
            let chunk = try fd.read(upTo: min(65536, limit + 1 - out.count))
            if chunk.isEmpty { return out }
            out += chunk
            if out.count > limit { throw FileReadError.tooLarge(path: path, limit: limit) }
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

// A genuinely small file system for full-disk tests: a tmpfs of a few MiB mounted on a fresh
// folder (root only; tests skip with the reason otherwise), a filler file that takes every
// free byte, and an unmount that always runs (call `remove()` in tearDown).
#if canImport(Glibc)
import Glibc
#endif

public final class SmallDisk {
    public let path: String
    public var fillerPath: String { path + "/filler" }
    private var mounted = false

    /// Why this machine cannot mount one, or nil when it can.
    public static var unavailableReason: String? {
        geteuid() == 0 ? nil : "mounting a tmpfs needs root (CI runs as root)"
    }

    public init(megabytes: Int) throws {
        path = TestFolders.make(prefix: "opencarkey-smalldisk")
        guard mount("tmpfs", path, "tmpfs", 0, "size=\(megabytes)m,mode=0700") == 0 else {
            let code = errno
            TestFolders.remove(path)
            throw SmallDiskError(description: "mount tmpfs on \(path): errno \(code)")
        }
        mounted = true
    }

    deinit { remove() }

    /// Unmounts (lazily if still busy) and deletes the mount point.
    public func remove() {
        guard mounted else { return }
        if umount(path) != 0 { umount2(path, Int32(MNT_DETACH)) }
        mounted = false
        rmdir(path)
    }

    /// Bytes an unprivileged writer could still allocate.
    public var freeBytes: Int64 {
        var info = statvfs()
        guard statvfs(path, &info) == 0 else { return -1 }
        return Int64(info.f_bavail) * Int64(info.f_frsize)
    }

    /// Appends to the filler file until the file system says ENOSPC; returns the bytes added.
    @discardableResult
    public func fill() -> Int64 {
        let fd = open(fillerPath, O_WRONLY | O_CREAT | O_APPEND | O_CLOEXEC, 0o600)
        guard fd >= 0 else { return 0 }
        defer { close(fd) }
        var total: Int64 = 0
        let chunk = [UInt8](repeating: 0x5A, count: 4096)
        while true {
            let written = chunk.withUnsafeBytes { write(fd, $0.baseAddress, $0.count) }
            if written <= 0 {
                if written < 0 && errno == EINTR { continue }
                break
            }
            total += Int64(written)
        }
        return total
    }

    /// Gives `bytes` of the filler back to the file system.
    public func release(bytes: Int64) {
        var info = stat()
        guard stat(fillerPath, &info) == 0 else { return }
        truncate(fillerPath, max(0, off_t(info.st_size) - off_t(bytes)))
    }
}

public struct SmallDiskError: Error, CustomStringConvertible {
    public let description: String
}

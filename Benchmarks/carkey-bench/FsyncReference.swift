// The disk's own price of one durable write, the reference the outbox's durable throughput is
// divided by. It overwrites pages of a preallocated file in place and fdatasyncs each time, as
// SQLite's WAL does once the WAL has reached its steady size (frames rewritten from the start
// after each checkpoint): the file never grows, so fdatasync flushes data only, never the
// inode's size. Appending to a fresh file instead would charge a metadata update per sync and
// make the reference look slower than the WAL's real work. Disk latency on a shared machine
// swings 10x within minutes, so callers interleave it with their runs and keep every round.
#if canImport(Glibc)
import Glibc
#endif
import Drivers

final class FsyncReference {
    static let pageSize = 4096
    /// A commit of one small row rewrites about this many pages (WAL frame of the table page
    /// and the index page); the reference writes the same per sync.
    static let pagesPerSync = 2
    static let filePages = 64

    private let descriptor: FileDescriptor
    private let page = [UInt8](repeating: 0x5a, count: FsyncReference.pageSize * FsyncReference.pagesPerSync)
    private var cursor = 0

    /// Creates and preallocates `path` (written in full and synced once, so later syncs do no
    /// allocation).
    init(path: String) throws {
        descriptor = try FileDescriptor.open(path, O_RDWR | O_CREAT | O_TRUNC)
        let whole = [UInt8](repeating: 0, count: Self.pageSize * Self.filePages)
        try descriptor.writeAll(whole)
        guard fsync(descriptor.rawValue) == 0 else { throw Errno.current("fsync") }
    }

    deinit { descriptor.close() }

    /// `iterations` in-place page writes, each followed by fdatasync; syncs per second and the
    /// mean wall microseconds per sync.
    func measure(iterations: Int) throws -> (perSec: Double, meanMicros: Double) {
        var failed: Errno?
        let seconds = Bench.seconds {
            for _ in 0..<iterations {
                let offset = off_t(cursor * Self.pageSize)
                cursor = (cursor + Self.pagesPerSync) % Self.filePages
                let written = page.withUnsafeBytes { pwrite(descriptor.rawValue, $0.baseAddress, $0.count, offset) }
                if written != page.count || fdatasync(descriptor.rawValue) != 0 {
                    failed = Errno.current("pwrite/fdatasync")
                    return
                }
            }
        }
        if let failed { throw failed }
        return (Double(iterations) / seconds, seconds * 1e6 / Double(iterations))
    }
}

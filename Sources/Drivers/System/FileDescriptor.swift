// A file descriptor over CInt with typed errors; the owner closes it explicitly.
#if canImport(Glibc)
import Glibc
#endif
import CShims

public struct FileDescriptor: Sendable, Hashable {
    public let rawValue: CInt

    public init(rawValue: CInt) { self.rawValue = rawValue }

    public static let standardInput = FileDescriptor(rawValue: 0)
    public static let standardOutput = FileDescriptor(rawValue: 1)
    public static let standardError = FileDescriptor(rawValue: 2)

    /// open(2) with O_CLOEXEC always added.
    public static func open(_ path: String, _ flags: CInt, mode: mode_t = 0o600) throws(Errno) -> FileDescriptor {
        let fd = try retryOnInterrupt("open \(path)") { ock_open(path, flags | O_CLOEXEC, UInt32(mode)) }
        return FileDescriptor(rawValue: fd)
    }

    public func close() {
        // close(2) must not be retried on EINTR on Linux: the descriptor is already gone.
        _ = Glibc.close(rawValue)
    }

    /// Reads up to `count` bytes; an empty result means end of file.
    public func read(upTo count: Int) throws -> [UInt8] {
        var buffer = [UInt8](repeating: 0, count: count)
        let n = try buffer.withUnsafeMutableBytes { raw throws(Errno) in try read(into: raw) }
        return Array(buffer.prefix(n))
    }

    /// Writes all of `bytes`, looping over short writes.
    public func writeAll(_ bytes: [UInt8]) throws {
        var offset = 0
        while offset < bytes.count {
            let n = try bytes.withUnsafeBytes { raw throws(Errno) in try write(UnsafeRawBufferPointer(rebasing: raw[offset...])) }
            offset += n
        }
    }

    /// One read(2) into `buffer`: how many bytes arrived (0: end of file). A non-blocking
    /// descriptor with nothing to read throws EAGAIN.
    public func read(into buffer: UnsafeMutableRawBufferPointer) throws(Errno) -> Int {
        try retryOnInterrupt("read") { Glibc.read(rawValue, buffer.baseAddress, buffer.count) }
    }

    /// One write(2) of `buffer`: how many bytes went out (possibly fewer than asked).
    public func write(_ buffer: UnsafeRawBufferPointer) throws(Errno) -> Int {
        try retryOnInterrupt("write") { Glibc.write(rawValue, buffer.baseAddress, buffer.count) }
    }

    /// One read(2) on a non-blocking descriptor: `.wouldBlock` when empty, `.closed` at end of file.
    public func readNonBlocking(upTo count: Int) throws(Errno) -> SocketReceive {
        var buffer = [UInt8](repeating: 0, count: max(1, count))
        do throws(Errno) {
            let n = try buffer.withUnsafeMutableBytes { raw in Result { () throws(Errno) in try read(into: raw) } }.get()
            return n == 0 ? .closed : .data(Array(buffer.prefix(n)))
        } catch where error.rawValue == EAGAIN || error.rawValue == EWOULDBLOCK {
            return .wouldBlock
        }
    }

    /// Async-signal-safe: one write(2) of one byte, no allocation, errno preserved. For wake-up
    /// pipes, whose reader only needs "something arrived": false when the byte did not go out
    /// (a full non-blocking pipe already holds a pending wake-up, so that loses nothing).
    @discardableResult
    public func writeWakeByte(_ byte: UInt8) -> Bool {
        let saved = errno
        var value = byte
        let written = Glibc.write(rawValue, &value, 1)
        errno = saved
        return written == 1
    }

    /// fsync(2): data and metadata reach stable storage.
    public func sync() throws(Errno) {
        _ = try retryOnInterrupt("fsync") { fsync(rawValue) }
    }
}

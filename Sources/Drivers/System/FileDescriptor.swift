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
    public static func open(_ path: String, _ flags: CInt, mode: mode_t = 0o600) throws -> FileDescriptor {
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
        let n = try buffer.withUnsafeMutableBytes { raw in
            try retryOnInterrupt("read") { Glibc.read(rawValue, raw.baseAddress, count) }
        }
        return Array(buffer.prefix(n))
    }

    /// Writes all of `bytes`, looping over short writes.
    public func writeAll(_ bytes: [UInt8]) throws {
        var offset = 0
        while offset < bytes.count {
            let n = try bytes.withUnsafeBytes { raw in
                try retryOnInterrupt("write") { Glibc.write(rawValue, raw.baseAddress! + offset, bytes.count - offset) }
            }
            offset += n
        }
    }

    /// fsync(2): data and metadata reach stable storage.
    public func sync() throws {
        _ = try retryOnInterrupt("fsync") { fsync(rawValue) }
    }
}

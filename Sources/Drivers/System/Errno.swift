// A typed errno, so no raw errno handling leaks above the syscall wrappers.
#if canImport(Glibc)
import Glibc
#endif

public struct Errno: Error, Equatable, Sendable, CustomStringConvertible {
    public let rawValue: Int32
    /// What was being done, e.g. "open /var/lib/opencarkey/keys.db".
    public let operation: String

    public init(_ rawValue: Int32, _ operation: String) {
        self.rawValue = rawValue
        self.operation = operation
    }

    /// The calling thread's current errno.
    public static func current(_ operation: String) -> Errno { Errno(errno, operation) }

    public var description: String { "\(operation): \(String(cString: strerror(rawValue))) (errno \(rawValue))" }

    public static func == (lhs: Errno, rhs: Errno) -> Bool { lhs.rawValue == rhs.rawValue }
}

/// Retries a syscall while it fails with EINTR; the one place interrupted calls are handled.
@inline(__always)
func retryOnInterrupt<T: FixedWidthInteger>(_ operation: @autoclosure () -> String, _ call: () -> T) throws(Errno) -> T {
    while true {
        let result = call()
        if result >= 0 { return result }
        if errno == EINTR { continue }
        throw Errno.current(operation())
    }
}

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

// The EINTR policy, in one place: an interrupted call is restarted (with the same arguments:
// a poll or a timed wait restarts with its full timeout, which only ever lengthens a wait),
// never reported upward. close(2) is the exception (FileDescriptor.close): on Linux the
// descriptor is gone even when it reports EINTR, and a retry could close a reused number.

/// Retries a syscall while it fails with EINTR (-1 and errno); any other failure is thrown.
@inline(__always)
func retryOnInterrupt<T: FixedWidthInteger>(_ operation: @autoclosure () -> String, _ call: () -> T) throws(Errno) -> T {
    while true {
        let result = call()
        if result >= 0 { return result }
        if errno == EINTR { continue }
        throw Errno.current(operation())
    }
}

/// The same policy for calls that return the error number instead of setting errno
/// (pthread_*, clock_nanosleep, posix_fallocate): 0 is success.
@inline(__always)
func retryOnInterruptedErrorCode(_ operation: @autoclosure () -> String, _ call: () -> CInt) throws(Errno) {
    while true {
        let code = call()
        if code == 0 { return }
        if code == EINTR { continue }
        throw Errno(code, operation())
    }
}

// A wake-up another thread (or the simulated GPIO chip) can raise and a poll(2) loop can sleep
// on: an eventfd(2) counter. Any number of signals before the loop looks collapse into one
// readable descriptor, so a burst costs the sleeper one wake-up, and nothing is ever lost
// between the signal and the poll (the counter stays non-zero until drained).
#if canImport(Glibc)
import Glibc
#endif
import CShims

public final class EventCounter: Sendable {
    /// Poll for `.readable`, then `drain()`.
    public let descriptor: FileDescriptor

    public init() throws(Errno) {
        let fd = ock_eventfd_nonblocking()
        guard fd >= 0 else { throw Errno.current("eventfd") }
        descriptor = FileDescriptor(rawValue: fd)
    }

    deinit { descriptor.close() }

    /// Thread-safe: one write(2). A counter at its maximum already reads
    /// as signalled, so a failed write loses nothing.
    public func signal() {
        var one: UInt64 = 1
        _ = try? withUnsafeBytes(of: &one) { raw in Result { () throws(Errno) in try descriptor.write(raw) } }.get()
    }

    /// Resets the counter; returns how many signals it held (0: none since the last drain).
    @discardableResult
    public func drain() -> UInt64 {
        var count: UInt64 = 0
        let n = try? withUnsafeMutableBytes(of: &count) { raw in Result { () throws(Errno) in try descriptor.read(into: raw) } }.get()
        return n == 8 ? count : 0
    }

    /// True when signalled and not yet drained (does not drain).
    public var isSignalled: Bool {
        (try? Poll.wait([(descriptor, .readable)], timeoutMillis: 0).first?.contains(.readable)) ?? false
    }
}

// poll(2) over many descriptors, for single-threaded event loops.
#if canImport(Glibc)
import Glibc
#endif

/// poll(2) event bits.
public struct PollEvents: OptionSet, Sendable, Hashable {
    public let rawValue: Int16
    public init(rawValue: Int16) { self.rawValue = rawValue }

    public static let readable = PollEvents(rawValue: Int16(POLLIN))
    public static let writable = PollEvents(rawValue: Int16(POLLOUT))
    /// Reported only: an error condition on the descriptor.
    public static let error = PollEvents(rawValue: Int16(POLLERR))
    /// Reported only: the peer hung up.
    public static let hangUp = PollEvents(rawValue: Int16(POLLHUP))
    /// Reported only: the descriptor is not open.
    public static let invalid = PollEvents(rawValue: Int16(POLLNVAL))
}

public enum Poll {
    /// Waits until a descriptor in `requests` is ready or `timeoutMillis` passes (negative: no
    /// limit). Returns the reported events for each request, in order; all empty on timeout.
    /// An interrupting signal restarts the wait with the full timeout (retryOnInterrupt); loops
    /// that must react to signals poll a descriptor the signal makes readable (SignalPipe).
    public static func wait(_ requests: [(FileDescriptor, PollEvents)], timeoutMillis: Int32) throws(Errno) -> [PollEvents] {
        var entries = requests.map { pollfd(fd: $0.0.rawValue, events: $0.1.rawValue, revents: 0) }
        let ready = try retryOnInterrupt("poll") {
            entries.withUnsafeMutableBufferPointer { Glibc.poll($0.baseAddress, nfds_t($0.count), timeoutMillis) }
        }
        guard ready > 0 else { return Array(repeating: [], count: entries.count) }
        return entries.map { PollEvents(rawValue: $0.revents) }
    }
}

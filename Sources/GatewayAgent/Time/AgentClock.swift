// The agent's clocks: monotonic time for every lifetime, the system wall clock for validity
// windows and timestamps, and whether that wall clock is trusted. Trusted here means the store
// holds a trusted-time mark and the system clock is at or after it (a board that booted with a
// reset clock reads earlier than the mark). The keys issue (#4) refines this.
#if canImport(Glibc)
import Glibc
#elseif canImport(Musl)
import Musl
#endif
import Drivers
import Protocol
import Synchronization

final class AgentClock: Sendable {
    private static let noMark = Int64.min
    private let monotonic: any MonotonicClock
    private let mark = Atomic<Int64>(AgentClock.noMark)

    init(monotonic: any MonotonicClock = SystemClock()) {
        self.monotonic = monotonic
    }

    /// Sets the trusted-time mark read from the store (nil: none yet).
    func setTrustedMark(_ seconds: Int64?) {
        mark.store(seconds ?? AgentClock.noMark, ordering: .relaxed)
    }

    var trustedMark: Int64? {
        let value = mark.load(ordering: .relaxed)
        return value == AgentClock.noMark ? nil : value
    }

    var monotonicMillis: UInt64 { monotonic.nowMillis() }

    /// One sample of both clocks for the protocol engine.
    func now() -> ProtocolTime {
        let wall = Self.wallSeconds()
        return ProtocolTime(monotonicMillis: monotonic.nowMillis(), wallSeconds: wall, wallClockTrusted: isTrusted(wall))
    }

    /// The stamp for events the store raises itself.
    func eventTime() -> EventTime {
        let wall = Self.wallSeconds()
        return EventTime(seconds: wall, trusted: isTrusted(wall))
    }

    private func isTrusted(_ wall: Int64) -> Bool {
        guard let mark = trustedMark else { return false }
        return wall >= mark
    }

    static func wallSeconds() -> Int64 {
        var spec = timespec()
        clock_gettime(CLOCK_REALTIME, &spec)
        return Int64(spec.tv_sec)
    }
}

// A monotonic clock with blocking sleep, injected wherever timing matters (actuator pulses,
// debounce, console timeouts) so tests run on virtual time instead of sleeping.
#if canImport(Glibc)
import Glibc
#endif
import Synchronization

public protocol MonotonicClock: Sendable {
    /// Milliseconds since an arbitrary fixed point; never goes backwards.
    func nowMillis() -> UInt64
    /// Blocks the calling thread for `millis` milliseconds (a virtual clock just advances).
    func sleep(millis: UInt64)
}

/// CLOCK_MONOTONIC: immune to wall-clock steps (NTP, a dead RTC battery being corrected).
public struct SystemClock: MonotonicClock {
    public init() {}

    public func nowMillis() -> UInt64 {
        var spec = timespec()
        // clock_gettime(CLOCK_MONOTONIC) cannot fail with a valid pointer on Linux.
        clock_gettime(CLOCK_MONOTONIC, &spec)
        return UInt64(spec.tv_sec) &* 1000 &+ UInt64(spec.tv_nsec) / 1_000_000
    }

    public func sleep(millis: UInt64) {
        var request = timespec(tv_sec: Int(millis / 1000), tv_nsec: Int(millis % 1000) * 1_000_000)
        var remaining = timespec()
        // A signal interrupts nanosleep; continue with what is left so a pulse is never cut short.
        while nanosleep(&request, &remaining) != 0 && errno == EINTR {
            request = remaining
        }
    }
}

/// Virtual time for tests: `sleep` advances the clock instantly and is recorded.
public final class ManualClock: MonotonicClock {
    private struct State {
        var now: UInt64
        var sleeps: [UInt64] = []
    }

    private let state: Mutex<State>

    public init(startMillis: UInt64 = 0) {
        state = Mutex(State(now: startMillis))
    }

    public func nowMillis() -> UInt64 { state.withLock { $0.now } }

    public func sleep(millis: UInt64) {
        state.withLock {
            $0.now += millis
            $0.sleeps.append(millis)
        }
    }

    /// Moves time forward without recording a sleep (time passing between events in a test).
    public func advance(by millis: UInt64) {
        state.withLock { $0.now += millis }
    }

    /// Every sleep requested so far, in order.
    public var sleeps: [UInt64] { state.withLock { $0.sleeps } }
}

/// CLOCK_MONOTONIC in milliseconds, for code that reads the time directly (the cloud thread,
/// the outbox's acknowledgement batching) rather than through an injected clock.
public func monotonicNow() -> UInt64 { SystemClock().nowMillis() }

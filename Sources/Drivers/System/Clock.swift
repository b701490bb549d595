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
        Self.sleep(nanoseconds: millis &* 1_000_000)
    }

    /// Blocks for `nanoseconds` on CLOCK_MONOTONIC. The wait is to an absolute deadline, so a
    /// signal (retried by retryOnInterrupt) never cuts a pulse or a settling time short nor
    /// stretches it.
    public static func sleep(nanoseconds: UInt64) {
        var deadline = timespec()
        clock_gettime(CLOCK_MONOTONIC, &deadline)
        let nanos = UInt64(deadline.tv_nsec) + nanoseconds % 1_000_000_000
        deadline.tv_sec += Int(clamping: nanoseconds / 1_000_000_000 + nanos / 1_000_000_000)
        deadline.tv_nsec = Int(nanos % 1_000_000_000)
        // Fails only for an invalid deadline (EINVAL), which the arithmetic above rules out.
        try? retryOnInterruptedErrorCode("clock_nanosleep", { clock_nanosleep(CLOCK_MONOTONIC, TIMER_ABSTIME, &deadline, nil) })
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

/// CLOCK_MONOTONIC in milliseconds, for code that reads the time directly (the outbox's
/// acknowledgement batching, the MQTT transport, the store's space checks) rather than through
/// an injected clock.
public func monotonicNow() -> UInt64 { SystemClock().nowMillis() }

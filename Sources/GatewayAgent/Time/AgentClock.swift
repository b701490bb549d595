// The agent's clocks: monotonic time for every lifetime, and trusted wall time for validity
// windows and timestamps. Trust comes from `TrustedClock` (docs/protocol.md section 18.7): the
// system clock counts only while the kernel says NTP keeps it synchronised (adjtimex), or once
// an owner's signed timestamp anchored this boot's time; the persisted high-water mark is the
// floor. Thread-safe: the store stamps its own events from whichever thread writes.
#if canImport(Glibc)
import Glibc
#endif
import Drivers
import Protocol
import Synchronization

final class AgentClock: Sendable {
    typealias WallClock = @Sendable () -> Int64
    typealias SyncProbe = @Sendable () -> Bool

    private struct State {
        var trusted: TrustedClock
        /// The mark the store holds (as far as this process knows).
        var persisted: Int64
        var persistedThisRun = false
    }

    private let monotonic: any MonotonicClock
    private let wall: WallClock
    private let systemSynchronized: SyncProbe
    private let state: Mutex<State>

    /// - systemSynchronized: asked on every sample; the default asks the kernel (adjtimex).
    init(monotonic: any MonotonicClock = SystemClock(), wall: @escaping WallClock = AgentClock.systemWallSeconds,
         systemSynchronized: @escaping SyncProbe = AgentClock.kernelSynchronized,
         policy: TrustedTimePolicy = TrustedTimePolicy()) {
        self.monotonic = monotonic
        self.wall = wall
        self.systemSynchronized = systemSynchronized
        state = Mutex(State(trusted: TrustedClock(mark: nil, policy: policy), persisted: 0))
    }

    /// Loads the trusted-time mark read from the store at start-up (nil: none yet). Forgets
    /// any anchor: call it once, before the first sample.
    func setTrustedMark(_ seconds: Int64?) {
        state.withLock { state in
            state.trusted = TrustedClock(mark: seconds, policy: state.trusted.policy)
            state.persisted = max(0, seconds ?? 0)
        }
    }

    /// The high-water mark now (nil before the car ever had trusted time).
    var trustedMark: Int64? {
        let mark = state.withLock { $0.trusted.mark }
        return mark > 0 ? mark : nil
    }

    /// Whether this boot's wall time is anchored (as of the last sample).
    var isTrusted: Bool { state.withLock { $0.trusted.isTrusted } }

    var monotonicMillis: UInt64 { monotonic.nowMillis() }

    /// The monotonic source itself, for components that run their own loop on it (the cloud
    /// service's reconnect and heartbeat deadlines), so the whole agent follows one clock.
    var monotonicSource: any MonotonicClock { monotonic }

    /// One sample of both clocks for the protocol engine.
    func now() -> ProtocolTime {
        let synchronized = systemSynchronized()
        let wallSeconds = wall()
        let millis = monotonic.nowMillis()
        return state.withLock { state in
            state.trusted.time(systemWallSeconds: wallSeconds, systemSynchronized: synchronized, monotonicMillis: millis)
        }
    }

    /// The stamp for events the store raises itself.
    func eventTime() -> EventTime {
        let sample = now()
        return EventTime(seconds: sample.wallSeconds, trusted: sample.wallClockTrusted)
    }

    /// An owner's AuthResponse timestamp, after the handshake verified its signature.
    func observeOwnerTimestamp(_ seconds: UInt32, keyID: KeyID) -> SignedTimeOutcome {
        let millis = monotonic.nowMillis()
        return state.withLock { $0.trusted.observeSignedTimestamp(Int64(seconds), from: .owner(keyID), monotonicMillis: millis) }
    }

    /// The mark to write to the store, or nil. The first growth of a run is written at once;
    /// after that only a step of at least `minimumStepSeconds` (the caller also writes at
    /// stop), so trusted time costs one synced write a minute, not one per sample. Losing
    /// less than a step in a power cut only lowers the floor a little.
    func markToPersist(minimumStepSeconds: Int64) -> Int64? {
        state.withLock { state in
            let mark = state.trusted.mark
            guard mark > state.persisted else { return nil }
            return !state.persistedThisRun || mark - state.persisted >= minimumStepSeconds ? mark : nil
        }
    }

    /// The store now holds `seconds` (CarStore.advanceTrustedTime returned it).
    func notePersisted(_ seconds: Int64) {
        state.withLock { state in
            state.persisted = max(state.persisted, seconds)
            state.persistedThisRun = true
        }
    }

    static let systemWallSeconds: WallClock = {
        var spec = timespec()
        clock_gettime(CLOCK_REALTIME, &spec)
        return Int64(spec.tv_sec)
    }

    /// adjtimex says NTP keeps the system clock (a failing call counts as not synchronised).
    static let kernelSynchronized: SyncProbe = {
        do throws(Errno) { return try KernelClockStatus.read().isSynchronized } catch { return false }
    }
}

// The service PIN's guess limit, kept across restarts. Pure (times passed in); the store part
// is ServiceLockoutStore.
//
// Before the limit survived restarts, cutting power gave 3 fresh guesses every 0.3 s: about
// 5,800 checked guesses an hour. Now:
// - an attempt is counted in the store *before* the PIN is compared, so a power cut after
//   the answer (or during the comparison) cannot take the count back;
// - the first 3 wrong PINs in a row cost nothing (typing errors); each further one, from the
//   3rd on, locks the PIN out for 30 s doubling up to 4 h, and attempts during a lockout are
//   refused unchecked;
// - only a correct authorisation (the PIN, or a signed service challenge) resets the count.
// Steady state at the cap is 6 checked guesses a day (16 on the first day), restarts or not
// against 10^6 six-digit PINs that is centuries on average.
//
// Time: the lockout's end is stored as wall-clock seconds for the next start, and kept as a
// monotonic deadline while the agent runs. At start the stored end is believed only up to the
// lockout's own length from now, so a clock that went back (no RTC, time not yet synchronised)
// cannot stretch a lockout, and a clock that jumps ahead while running cannot shorten one.

struct ServicePINLockout: Equatable {
    static let freeFailures: UInt32 = 3
    static let firstLockoutMillis: UInt64 = 30_000
    static let maxLockoutMillis: UInt64 = 4 * 3600 * 1000

    /// What the store keeps (ServiceLockoutStore).
    struct Persisted: Equatable {
        /// Wrong PINs in a row (counted before each comparison).
        var failures: UInt32
        /// Wall-clock second the current lockout ends (0: none).
        var lockedUntilWallSeconds: Int64

        static let clear = Persisted(failures: 0, lockedUntilWallSeconds: 0)
    }

    private(set) var failures: UInt32
    /// Monotonic millisecond the current lockout ends, while the agent runs.
    private(set) var lockedUntilMillis: UInt64?

    /// The lockout that follows the `failures`-th wrong PIN in a row.
    static func lockoutMillis(afterFailures failures: UInt32) -> UInt64 {
        guard failures >= freeFailures else { return 0 }
        let doublings = min(failures - freeFailures, 20)
        return min(maxLockoutMillis, firstLockoutMillis << UInt64(doublings))
    }

    /// From the store at start-up.
    init(_ persisted: Persisted, nowMillis: UInt64, wallSeconds: Int64) {
        failures = persisted.failures
        let longest = Self.lockoutMillis(afterFailures: persisted.failures)
        let stored = persisted.lockedUntilWallSeconds > wallSeconds
            ? UInt64(clamping: persisted.lockedUntilWallSeconds - wallSeconds) * 1000 : 0
        let remaining = min(stored, longest)
        lockedUntilMillis = remaining > 0 ? nowMillis + remaining : nil
    }

    /// A store that cannot be read: the longest lockout, so an unreadable row is no way around
    /// the limit (the signed challenge still works).
    static func unreadable(nowMillis: UInt64) -> ServicePINLockout {
        var lockout = ServicePINLockout(.clear, nowMillis: nowMillis, wallSeconds: 0)
        lockout.failures = UInt32.max / 2
        lockout.lockedUntilMillis = nowMillis + maxLockoutMillis
        return lockout
    }

    func remainingMillis(nowMillis: UInt64) -> UInt64 {
        guard let until = lockedUntilMillis, until > nowMillis else { return 0 }
        return until - nowMillis
    }

    /// What to store before comparing the next PIN: counted as wrong, with the lockout a wrong
    /// PIN would start. nil while locked out (nothing is compared then).
    func beforeAttempt(nowMillis: UInt64, wallSeconds: Int64) -> Persisted? {
        guard remainingMillis(nowMillis: nowMillis) == 0 else { return nil }
        let next = failures &+ 1
        let lockout = Self.lockoutMillis(afterFailures: next)
        return Persisted(failures: next, lockedUntilWallSeconds: lockout > 0 ? wallSeconds + Int64(lockout / 1000) : 0)
    }

    /// The PIN was wrong: the count stored by `beforeAttempt` applies. Returns the wrong PINs
    /// left before a lockout (0: locked out now, for `lockoutMillis`).
    mutating func wrong(nowMillis: UInt64) -> (left: UInt32, lockoutMillis: UInt64) {
        failures &+= 1
        let lockout = Self.lockoutMillis(afterFailures: failures)
        lockedUntilMillis = lockout > 0 ? nowMillis + lockout : nil
        return (failures < Self.freeFailures ? Self.freeFailures - failures : 0, lockout)
    }

    /// A correct authorisation (PIN or signed challenge).
    mutating func reset() {
        failures = 0
        lockedUntilMillis = nil
    }
}

// Service mode on the console: `service on PIN` unlocks the test actuations for a while.
// Pure and clock-driven (times passed in), so the lockout rules are tested without waiting.
//
// Guessing: 4 digits are 10^4 tries, so wrong PINs are rate-limited. After `maxFailures`
// wrong ones in a row, attempts are refused unchecked for a lockout that doubles each time
// (30 s up to 15 min); a right PIN resets the count. Refusing unchecked during the lockout
// means the console cannot be used as an oracle at line speed.

struct ServiceMode {
    static let maxFailures = 3
    static let firstLockoutMillis: UInt64 = 30_000
    static let maxLockoutMillis: UInt64 = 15 * 60_000

    enum Attempt: Equatable {
        case enabled(untilMillis: UInt64)
        case wrongPIN(attemptsLeft: Int)
        /// Wrong PINs hit the limit now or earlier; nothing was checked.
        case lockedOut(remainingMillis: UInt64)
        /// No PIN configured: service mode cannot be entered at all.
        case notConfigured
    }

    let pin: ServicePIN?
    let timeoutMillis: UInt64
    private(set) var activeUntil: UInt64?
    private var failures = 0
    private var lockouts = 0
    private var lockedUntil: UInt64?

    init(pin: ServicePIN?, timeoutSeconds: Int) {
        self.pin = pin
        self.timeoutMillis = UInt64(max(1, timeoutSeconds)) * 1000
    }

    func isActive(now: UInt64) -> Bool { activeUntil.map { now < $0 } ?? false }

    /// Milliseconds left in service mode (0 when off).
    func remaining(now: UInt64) -> UInt64 { activeUntil.map { $0 > now ? $0 - now : 0 } ?? 0 }

    mutating func enable(attempt: String, now: UInt64) -> Attempt {
        guard let pin else { return .notConfigured }
        if let until = lockedUntil, now < until { return .lockedOut(remainingMillis: until - now) }
        if pin.matches(attempt) {
            failures = 0
            lockouts = 0
            lockedUntil = nil
            activeUntil = now + timeoutMillis
            return .enabled(untilMillis: now + timeoutMillis)
        }
        failures += 1
        guard failures >= Self.maxFailures else { return .wrongPIN(attemptsLeft: Self.maxFailures - failures) }
        failures = 0
        let lockout = min(Self.maxLockoutMillis, Self.firstLockoutMillis << UInt64(min(lockouts, 10)))
        lockouts += 1
        lockedUntil = now + lockout
        return .lockedOut(remainingMillis: lockout)
    }

    mutating func disable() {
        activeUntil = nil
    }
}

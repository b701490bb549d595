// Service mode on the console: once authorised (a signed challenge or the PIN), the test
// actuations are allowed for a while. Pure and clock-driven (times passed in). Who may enter
// is ServiceCommands' business (ServiceChallengeGate, ServicePINLockout).

struct ServiceMode {
    let timeoutMillis: UInt64
    private(set) var activeUntil: UInt64?

    init(timeoutSeconds: Int) {
        self.timeoutMillis = UInt64(max(1, timeoutSeconds)) * 1000
    }

    func isActive(now: UInt64) -> Bool { activeUntil.map { now < $0 } ?? false }

    /// Milliseconds left in service mode (0 when off).
    func remaining(now: UInt64) -> UInt64 { activeUntil.map { $0 > now ? $0 - now : 0 } ?? 0 }

    /// Starts (or extends) service mode; returns when it ends.
    mutating func enter(now: UInt64) -> UInt64 {
        activeUntil = now + timeoutMillis
        return now + timeoutMillis
    }

    mutating func disable() {
        activeUntil = nil
    }
}

// Per-link back-off after repeated failures, on monotonic time. Slows down online guessing and
// flooding; it is not what makes the protocol secure.

public struct RateLimitPolicy: Sendable, Equatable {
    /// Failures within `windowMillis` that trip the limiter.
    public var failureThreshold: Int
    public var windowMillis: UInt64
    /// First block length; each trip within `maxPenaltyMillis` of the previous block's end doubles it.
    public var basePenaltyMillis: UInt64
    public var maxPenaltyMillis: UInt64

    public init(failureThreshold: Int = 5, windowMillis: UInt64 = 60_000,
                basePenaltyMillis: UInt64 = 30_000, maxPenaltyMillis: UInt64 = 900_000) {
        self.failureThreshold = max(1, failureThreshold)
        self.windowMillis = windowMillis
        self.basePenaltyMillis = basePenaltyMillis
        self.maxPenaltyMillis = max(basePenaltyMillis, maxPenaltyMillis)
    }
}

struct RateLimiter: Sendable {
    private struct Entry: Sendable {
        var failures: [UInt64] = []
        var blockedUntil: UInt64 = 0
        var lastPenalty: UInt64 = 0
        var lastActivity: UInt64 = 0
    }

    let policy: RateLimitPolicy
    /// Bounded: the least recently active link is forgotten first.
    let capacity: Int
    private var entries: [LinkID: Entry] = [:]

    init(policy: RateLimitPolicy, capacity: Int) {
        self.policy = policy
        self.capacity = max(1, capacity)
    }

    func isBlocked(_ link: LinkID, now: UInt64) -> Bool {
        guard let entry = entries[link] else { return false }
        return now < entry.blockedUntil
    }

    /// Milliseconds left in the block, for diagnostics.
    func remainingBlock(_ link: LinkID, now: UInt64) -> UInt64 {
        guard let entry = entries[link], now < entry.blockedUntil else { return 0 }
        return entry.blockedUntil - now
    }

    /// Counts one failure. Returns true when this failure starts a block.
    @discardableResult
    mutating func recordFailure(_ link: LinkID, now: UInt64) -> Bool {
        var entry = entries[link] ?? Entry()
        entry.lastActivity = now
        defer { store(entry, for: link) }
        if now < entry.blockedUntil { return false }
        entry.failures.removeAll { now >= $0 + policy.windowMillis }
        entry.failures.append(now)
        guard entry.failures.count >= policy.failureThreshold else { return false }
        // Escalate when the previous block ended recently; otherwise start over at the base.
        let escalate = entry.lastPenalty > 0 && now < entry.blockedUntil + policy.maxPenaltyMillis
        let penalty = escalate ? min(entry.lastPenalty * 2, policy.maxPenaltyMillis) : policy.basePenaltyMillis
        entry.lastPenalty = penalty
        entry.blockedUntil = now + penalty
        entry.failures.removeAll()
        return true
    }

    /// A successful authentication clears the failure count but keeps the escalation level.
    mutating func recordSuccess(_ link: LinkID, now: UInt64) {
        guard var entry = entries[link] else { return }
        entry.failures.removeAll()
        entry.lastActivity = now
        entries[link] = entry
    }

    private mutating func store(_ entry: Entry, for link: LinkID) {
        if entries[link] == nil, entries.count >= capacity,
           let oldest = entries.min(by: { $0.value.lastActivity < $1.value.lastActivity })?.key {
            entries.removeValue(forKey: oldest)
        }
        entries[link] = entry
    }
}

extension FaultCode {
    /// Faults that describe the car's condition rather than something the phone did wrong do
    /// not count toward the limit: a phone retrying while the car is busy is not an attacker.
    var countsTowardRateLimit: Bool {
        switch self {
        case .rateLimited, .busy, .internalError, .actuationFailed: return false
        default: return true
        }
    }
}

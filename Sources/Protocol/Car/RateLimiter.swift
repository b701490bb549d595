// Back-off after repeated failures, on monotonic time: per link, and car-wide for failures
// before a session (a phone that reconnects gets a new link, and with it a clean per-link
// record). Slows down online guessing and flooding; it is not what makes the protocol secure.

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

/// One failure history with escalating blocks: the state behind the per-link entries and the
/// car-wide pre-session limiter.
struct FailureBackoff: Sendable {
    private var failures: [UInt64] = []
    private var blockedUntil: UInt64 = 0
    private var lastPenalty: UInt64 = 0
    private(set) var lastActivity: UInt64 = 0

    func isBlocked(now: UInt64) -> Bool { now < blockedUntil }

    /// Milliseconds left in the block, for diagnostics.
    func remainingBlock(now: UInt64) -> UInt64 { now < blockedUntil ? blockedUntil - now : 0 }

    /// Counts one failure. Returns true when this failure starts a block.
    mutating func recordFailure(now: UInt64, policy: RateLimitPolicy) -> Bool {
        lastActivity = now
        if now < blockedUntil { return false }
        failures.removeAll { now >= $0 + policy.windowMillis }
        failures.append(now)
        guard failures.count >= policy.failureThreshold else { return false }
        // Escalate when the previous block ended recently; otherwise start over at the base.
        let escalate = lastPenalty > 0 && now < blockedUntil + policy.maxPenaltyMillis
        let penalty = escalate ? min(lastPenalty * 2, policy.maxPenaltyMillis) : policy.basePenaltyMillis
        lastPenalty = penalty
        blockedUntil = now + penalty
        failures.removeAll()
        return true
    }

    /// Forgets the failure count but keeps the escalation level.
    mutating func clearFailures(now: UInt64) {
        failures.removeAll()
        lastActivity = now
    }
}

struct RateLimiter: Sendable {
    let policy: RateLimitPolicy
    /// Bounded: the least recently active link is forgotten first.
    let capacity: Int
    private var entries: [LinkID: FailureBackoff] = [:]

    init(policy: RateLimitPolicy, capacity: Int) {
        self.policy = policy
        self.capacity = max(1, capacity)
    }

    func isBlocked(_ link: LinkID, now: UInt64) -> Bool {
        entries[link]?.isBlocked(now: now) ?? false
    }

    /// Milliseconds left in the block, for diagnostics.
    func remainingBlock(_ link: LinkID, now: UInt64) -> UInt64 {
        entries[link]?.remainingBlock(now: now) ?? 0
    }

    /// Counts one failure. Returns true when this failure starts a block.
    @discardableResult
    mutating func recordFailure(_ link: LinkID, now: UInt64) -> Bool {
        var entry = entries[link] ?? FailureBackoff()
        defer { store(entry, for: link) }
        return entry.recordFailure(now: now, policy: policy)
    }

    /// A successful authentication clears the failure count but keeps the escalation level.
    mutating func recordSuccess(_ link: LinkID, now: UInt64) {
        entries[link]?.clearFailures(now: now)
    }

    private mutating func store(_ entry: FailureBackoff, for link: LinkID) {
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
    /// The ranging faults neither: no secret can be guessed through them, and a car without a
    /// UWB module must not block a phone for asking.
    var countsTowardRateLimit: Bool {
        switch self {
        case .rateLimited, .busy, .internalError, .actuationFailed, .lastOwnerKey,
             .notInProximity, .rangingFailed, .rangingUnsupported: return false
        default: return true
        }
    }
}

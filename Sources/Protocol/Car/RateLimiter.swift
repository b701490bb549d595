// Back-off after repeated failures, on monotonic time, per peer (the radio address when the
// transport reports one, else the link). There is deliberately no car-wide record: anyone in
// radio range could fill it and lock every phone out. Slows down online guessing; it is not
// what makes the protocol secure, and what bounds a flood is the handshake budget.

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

/// One failure history with escalating blocks: the state behind each peer's entry.
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

    /// Failures counted or a block served: not a peer with a clean record.
    var hasHistory: Bool { !failures.isEmpty || lastPenalty > 0 }

    /// Forgets the failure count but keeps the escalation level.
    mutating func clearFailures(now: UInt64) {
        failures.removeAll()
        lastActivity = now
    }
}

struct RateLimiter: Sendable {
    let policy: RateLimitPolicy
    /// Bounded: the least recently active peer is forgotten first.
    let capacity: Int
    private var entries: [PeerKey: FailureBackoff] = [:]

    init(policy: RateLimitPolicy, capacity: Int) {
        self.policy = policy
        self.capacity = max(1, capacity)
    }

    func isBlocked(_ peer: PeerKey, now: UInt64) -> Bool {
        entries[peer]?.isBlocked(now: now) ?? false
    }

    /// Milliseconds left in the block, for diagnostics.
    func remainingBlock(_ peer: PeerKey, now: UInt64) -> UInt64 {
        entries[peer]?.remainingBlock(now: now) ?? 0
    }

    /// Whether the peer has failed before (its Hellos get no priority over fresh ones).
    func hasHistory(_ peer: PeerKey) -> Bool { entries[peer]?.hasHistory ?? false }

    /// Counts one failure. Returns true when this failure starts a block.
    @discardableResult
    mutating func recordFailure(_ peer: PeerKey, now: UInt64) -> Bool {
        var entry = entries[peer] ?? FailureBackoff()
        defer { store(entry, for: peer) }
        return entry.recordFailure(now: now, policy: policy)
    }

    /// A successful authentication clears the failure count but keeps the escalation level.
    mutating func recordSuccess(_ peer: PeerKey, now: UInt64) {
        entries[peer]?.clearFailures(now: now)
    }

    // A link as its own peer (tests, transports without addresses).
    func isBlocked(_ link: LinkID, now: UInt64) -> Bool { isBlocked(.link(link), now: now) }
    func remainingBlock(_ link: LinkID, now: UInt64) -> UInt64 { remainingBlock(.link(link), now: now) }
    @discardableResult
    mutating func recordFailure(_ link: LinkID, now: UInt64) -> Bool { recordFailure(.link(link), now: now) }
    mutating func recordSuccess(_ link: LinkID, now: UInt64) { recordSuccess(.link(link), now: now) }

    private mutating func store(_ entry: FailureBackoff, for link: PeerKey) {
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

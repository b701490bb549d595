// Trusted wall time for a car with no real-time clock, as pure logic. A persisted high-water
// mark only moves forward; the time is *trusted* when, in this boot, it came from a
// synchronised system clock or from signed timestamps, and is carried forward on the
// monotonic clock. The agent feeds it readings and persists `mark` when it grows.

public struct TrustedClock: Sendable, Equatable {
    struct Anchor: Sendable, Equatable {
        let wallSeconds: Int64
        let monotonicMillis: UInt64
        func wall(at monotonic: UInt64) -> Int64 {
            wallSeconds + Int64((monotonic >= monotonicMillis ? monotonic - monotonicMillis : 0) / 1000)
        }
    }

    struct Candidate: Sendable, Equatable {
        let source: TimeSource
        let anchor: Anchor
    }

    public let policy: TrustedTimePolicy
    /// Latest wall time (seconds since 1970) known from a trusted source; 0 = never.
    /// Persist it whenever it grows (CarStore.advanceTrustedTime).
    public private(set) var mark: Int64
    /// Trusted time in this boot (nil after a restart until a source vouches again).
    private var anchor: Anchor?
    private var candidate: Candidate?

    public init(mark: Int64?, policy: TrustedTimePolicy = TrustedTimePolicy()) {
        self.mark = max(0, mark ?? 0)
        self.policy = policy
    }

    public var isTrusted: Bool { anchor != nil }

    /// The time to hand the engine for this event.
    /// - `systemSynchronized`: the kernel says NTP keeps the system clock (adjtimex without
    ///   STA_UNSYNC). Then the system clock is trusted, unless it is far behind the mark.
    /// - Otherwise the last trusted reading of this boot carried forward on the monotonic
    ///   clock is trusted; with none, time is untrusted and never earlier than the mark.
    public mutating func time(systemWallSeconds: Int64, systemSynchronized: Bool, monotonicMillis: UInt64) -> ProtocolTime {
        if systemSynchronized, systemWallSeconds > mark - policy.systemBehindMarkToleranceSeconds {
            let wall = max(systemWallSeconds, mark)
            anchor = Anchor(wallSeconds: wall, monotonicMillis: monotonicMillis)
            mark = wall
            return ProtocolTime(monotonicMillis: monotonicMillis, wallSeconds: wall, wallClockTrusted: true)
        }
        if systemSynchronized {
            // NTP contradicts the mark: believe neither until it is sorted out.
            anchor = nil
        }
        if let anchor {
            let wall = max(anchor.wall(at: monotonicMillis), mark)
            mark = wall
            return ProtocolTime(monotonicMillis: monotonicMillis, wallSeconds: wall, wallClockTrusted: true)
        }
        return ProtocolTime(monotonicMillis: monotonicMillis, wallSeconds: max(systemWallSeconds, mark), wallClockTrusted: false)
    }

    /// A validated signed timestamp (seconds since 1970). Policy:
    /// - a trusted clock is never adjusted by a signed source;
    /// - never behind the mark (a little behind, within `behindMarkToleranceSeconds`,
    ///   anchors at the mark);
    /// - up to `maxSingleSourceStepSeconds` ahead of the mark: anchors on its own;
    /// - further ahead (or with no mark at all): only when a second, different source agrees
    ///   within `corroborationToleranceSeconds` inside `corroborationWindowMillis`.
    @discardableResult
    public mutating func observeSignedTimestamp(_ seconds: Int64, from source: TimeSource,
                                                monotonicMillis: UInt64) -> SignedTimeOutcome {
        if anchor != nil { return .alreadyTrusted }
        if seconds < mark - policy.behindMarkToleranceSeconds { return .behindMark }
        let wall = max(seconds, mark)
        if mark > 0, wall - mark <= policy.maxSingleSourceStepSeconds {
            return anchorAt(wall, monotonicMillis: monotonicMillis)
        }
        if let pending = candidate, pending.source != source,
           monotonicMillis >= pending.anchor.monotonicMillis,
           monotonicMillis - pending.anchor.monotonicMillis <= policy.corroborationWindowMillis,
           abs(pending.anchor.wall(at: monotonicMillis) - wall) <= policy.corroborationToleranceSeconds {
            // The earlier of the two readings: a later one could only come from a fast clock.
            return anchorAt(min(wall, max(pending.anchor.wall(at: monotonicMillis), mark)), monotonicMillis: monotonicMillis)
        }
        candidate = Candidate(source: source, anchor: Anchor(wallSeconds: wall, monotonicMillis: monotonicMillis))
        return .awaitingCorroboration
    }

    private mutating func anchorAt(_ wall: Int64, monotonicMillis: UInt64) -> SignedTimeOutcome {
        anchor = Anchor(wallSeconds: wall, monotonicMillis: monotonicMillis)
        candidate = nil
        mark = max(mark, wall)
        return .anchored(seconds: wall)
    }
}

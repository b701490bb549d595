// Proximity of every key in range, by KeyID: the one object the agent feeds with ranging
// rounds and BLE RSSI and asks before unlocking. Sans-IO: time is passed in as monotonic
// milliseconds. The number of tracked keys is bounded (the least recently heard key is
// dropped for a new one), and each tracker is fixed-size, so memory is bounded however long
// the car runs.

public struct ProximityEngine: Sendable {
    public let configuration: ProximityConfiguration
    public let policy: ProximityPolicy

    private struct Entry: Sendable {
        var tracker: ProximityTracker
        /// Order of last use, for eviction (a counter, not a time: it cannot go backwards).
        var lastUse: UInt64
    }

    private var entries: [KeyID: Entry] = [:]
    private var useCounter: UInt64 = 0
    private var walkAwayMonitor = WalkAwayMonitor()

    public init(configuration: ProximityConfiguration = ProximityConfiguration()) {
        self.configuration = configuration
        self.policy = ProximityPolicy(configuration: configuration)
        entries.reserveCapacity(configuration.maxTrackedKeys)
    }

    /// Keys currently tracked (never more than `maxTrackedKeys`).
    public var trackedKeyCount: Int { entries.count }
    /// Tracked keys, most recently heard first (an order that does not depend on hashing).
    public var trackedKeys: [KeyID] { entries.sorted { $0.value.lastUse > $1.value.lastUse }.map(\.key) }

    // MARK: Inputs

    /// A ranging round's range for `key`; `stsValid` is the driver's STS verdict.
    public mutating func observe(_ range: RangeMeasurement, stsValid: Bool, key: KeyID, atMillis now: UInt64) {
        withTracker(key) { $0.observe(range, stsValid: stsValid, atMillis: now) }
    }

    /// A round for `key` lost on the air (timeout, frame error, late TX): neither counts nor
    /// breaks the run of valid rounds.
    public mutating func observeLoss(key: KeyID, atMillis now: UInt64) {
        withTracker(key) { $0.observeLoss(atMillis: now) }
    }

    /// A round for `key` that failed a security check (STS, authenticator, plausibility): the
    /// run of valid rounds starts over.
    public mutating func observeFailure(key: KeyID, atMillis now: UInt64) {
        withTracker(key) { $0.observeFailure(atMillis: now) }
    }

    /// A BLE RSSI sample (dBm) for `key`; says whether UWB ranging should start.
    @discardableResult
    public mutating func observe(rssi: Double, key: KeyID, atMillis now: UInt64) -> RangingWake {
        withTracker(key) { $0.observe(rssi: rssi, atMillis: now) }
    }

    /// Drops everything known about `key` (revoked, session closed for good).
    public mutating func forget(key: KeyID) {
        entries[key] = nil
    }

    // MARK: Outputs

    public func estimate(key: KeyID, atMillis now: UInt64) -> ProximityEstimate {
        entries[key]?.tracker.estimate(atMillis: now) ?? .unknown
    }

    /// May `key` run `command` from where it is?
    public func authorize(command: CommandCode, key: KeyID, atMillis now: UInt64) -> ProximityAuthorization {
        policy.authorize(command: command, key: key, estimate: estimate(key: key, atMillis: now), atMillis: now)
    }

    /// A door handle was pulled: the nearest authenticated key that may unlock, if any.
    public func passiveEntry(handlePulledAtMillis now: UInt64, authenticatedKeys: [KeyID]) -> PassiveEntryDecision {
        var seen = Set<KeyID>()
        let candidates = authenticatedKeys.filter { seen.insert($0).inserted }.map {
            authorize(command: .unlock, key: $0, atMillis: now)
        }
        let chosen = candidates.filter(\.isAllowed).min { a, b in
            (a.evidence.filteredDistanceMetres ?? .infinity) < (b.evidence.filteredDistanceMetres ?? .infinity)
        }
        return PassiveEntryDecision(key: chosen?.evidence.key, candidates: candidates)
    }

    /// Call periodically (every second or so) and on door/lock changes: says when to lock
    /// because every key that was near has walked away. `keys` are the keys to consider
    /// (those allowed to lock this car).
    public mutating func walkAway(atMillis now: UInt64, doorsClosed: Bool, locked: Bool,
                                  keys: [KeyID]) -> WalkAwayDecision {
        var seen = Set<KeyID>()
        let unique = keys.filter { seen.insert($0).inserted }
        let estimates = Dictionary(uniqueKeysWithValues: unique.map { ($0, estimate(key: $0, atMillis: now)) })
        let result = walkAwayMonitor.evaluate(
            atMillis: now, doorsClosed: doorsClosed, locked: locked,
            nearTimes: unique.map { (key: $0, lastNear: estimates[$0]?.lastNearMillis) },
            delayMillis: configuration.walkAwayDelayMillis)
        let evidence = result.keys.map { ProximityEvidence(key: $0, atMillis: now, estimate: estimates[$0] ?? .unknown) }
        return WalkAwayDecision(lock: result.lock, reason: result.reason, evidence: evidence)
    }

    // MARK: Bookkeeping

    private mutating func withTracker<T>(_ key: KeyID, _ body: (inout ProximityTracker) -> T) -> T {
        useCounter &+= 1
        // One hash lookup on the common path (a key already tracked): this runs every round.
        if let index = entries.index(forKey: key) {
            entries.values[index].lastUse = useCounter
            return body(&entries.values[index].tracker)
        }
        if entries.count >= configuration.maxTrackedKeys,
           let oldest = entries.min(by: { $0.value.lastUse < $1.value.lastUse }) {
            entries[oldest.key] = nil
        }
        var entry = Entry(tracker: ProximityTracker(configuration: configuration), lastUse: useCounter)
        let result = body(&entry.tracker)
        entries[key] = entry
        return result
    }
}

// Walk-away lock: when everyone who came to the car with a key has left, lock it. Fires once
// per walk-away, and only for keys that were actually near during this unlocked period, so a
// remote unlock for a courier is not undone the moment it happens.

struct WalkAwayMonitor: Sendable, Equatable {
    /// When the car was first seen unlocked in this unlocked period (nil while locked).
    private var unlockedSinceMillis: UInt64?
    /// When this walk-away's lock was asked for (nil: not yet).
    private var firedAtMillis: UInt64?

    /// `nearTimes`: for each key to consider, its last time in Near or closer (nil: never).
    mutating func evaluate(atMillis now: UInt64, doorsClosed: Bool, locked: Bool,
                           nearTimes: [(key: KeyID, lastNear: UInt64?)],
                           delayMillis: UInt64) -> (lock: Bool, reason: WalkAwayReason, keys: [KeyID]) {
        if locked {
            unlockedSinceMillis = nil
            firedAtMillis = nil
            return (false, .alreadyLocked, [])
        }
        if unlockedSinceMillis.map({ now < $0 }) ?? true { unlockedSinceMillis = now }
        let since = unlockedSinceMillis ?? now
        // A key that was near just before the unlock (it walked up, the handle was pulled)
        // counts: the window reaches back one delay before the unlocked period began.
        let windowStart = since >= delayMillis ? since - delayMillis : 0
        let wereNear = nearTimes.compactMap { entry -> (KeyID, UInt64)? in
            guard let near = entry.lastNear, near >= windowStart else { return nil }
            return (entry.key, near)
        }
        let keys = wereNear.map(\.0)
        if let fired = firedAtMillis {
            // Only a key seen near again after the lock request starts a new walk-away.
            guard wereNear.contains(where: { $0.1 > fired }) else { return (false, .alreadyFired, keys) }
            firedAtMillis = nil
        }
        guard !wereNear.isEmpty else { return (false, .noKeyWasNear, keys) }
        let someoneNear = wereNear.contains { _, near in now < near || now - near < delayMillis }
        if someoneNear { return (false, .keyNearby, keys) }
        guard doorsClosed else { return (false, .doorOpen, keys) }
        firedAtMillis = now
        return (true, .everyKeyAway, keys)
    }
}

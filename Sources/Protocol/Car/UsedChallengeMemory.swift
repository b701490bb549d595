// Recently consumed challenges, so a replayed AuthResponse is reported as "reused" rather than
// "unknown", and a late one on its own link as "expired" (rule A3) with the key it was issued
// for. Security does not depend on it: a consumed challenge is gone from its link either way.
// Car-wide (one memory for every link), bounded FIFO; challenges are random, so one is never
// issued twice.

struct UsedChallengeMemory: Sendable {
    /// A challenge that was not answered in time: where it was issued and for which key.
    struct Expiry: Sendable, Equatable {
        let link: LinkID
        let keyID: KeyID
    }

    let capacity: Int
    private var order: [Bytes] = []
    /// Every remembered challenge; the value is set for those that expired unanswered.
    private var members: [Bytes: Expiry?] = [:]

    init(capacity: Int) { self.capacity = max(1, capacity) }

    mutating func insert(_ challenge: Bytes) {
        remember(challenge, nil)
    }

    /// A challenge swept because its lifetime passed (not consumed by an answer).
    mutating func insert(_ challenge: Bytes, expiredOn link: LinkID, keyID: KeyID) {
        remember(challenge, Expiry(link: link, keyID: keyID))
    }

    func contains(_ challenge: Bytes) -> Bool { members[challenge] != nil }

    /// Where and for whom `challenge` was issued, if it expired unanswered.
    func expiry(of challenge: Bytes) -> Expiry? { members[challenge] ?? nil }

    private mutating func remember(_ challenge: Bytes, _ expiry: Expiry?) {
        if members[challenge] != nil {
            // Already remembered; a sweep after a use keeps the first (used) meaning.
            return
        }
        members[challenge] = .some(expiry)
        order.append(challenge)
        if order.count > capacity { members.removeValue(forKey: order.removeFirst()) }
    }
}

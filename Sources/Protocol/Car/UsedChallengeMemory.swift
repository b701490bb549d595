// Recently consumed challenges, so a replayed AuthResponse is reported as "reused" rather than
// "unknown". Security does not depend on it: a consumed challenge is gone from its link either
// way. Bounded FIFO; challenges are random, so one is never issued twice.

struct UsedChallengeMemory: Sendable {
    let capacity: Int
    private var order: [Bytes] = []
    private var members: Set<Bytes> = []

    init(capacity: Int) { self.capacity = max(1, capacity) }

    mutating func insert(_ challenge: Bytes) {
        guard members.insert(challenge).inserted else { return }
        order.append(challenge)
        if order.count > capacity { members.remove(order.removeFirst()) }
    }

    func contains(_ challenge: Bytes) -> Bool { members.contains(challenge) }
}

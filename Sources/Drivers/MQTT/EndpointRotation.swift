// Which broker node to try next, and when, for a link configured with several (a cluster's
// nodes). Pure: time and randomness come from the caller.
//
// Each endpoint keeps its own ReconnectBackoff and a "not before" time. A failed attempt or a
// lost connection at endpoint i pushes i's time out by i's next backoff delay; the next
// attempt goes to the endpoint due first (one never tried, or recovered, is due at once).
// Ties go to the last endpoint that gave a good CONNACK, then to list order after i. With one
// endpoint this is exactly ReconnectBackoff's schedule (2, 4, 8 ... 60 s plus jitter).
//
// Moving to another endpoint that is due at once still waits up to `switchJitterMillis`: when
// a node dies, every car on it notices within the same keepalive, and without the spread they
// would all hit the surviving node in the same millisecond.

public struct EndpointRotation: Sendable, Equatable {
    public let count: Int
    public private(set) var backoffs: [ReconnectBackoff]
    /// Monotonic milliseconds before which endpoint i is not tried again (0: due at once).
    public private(set) var notBefore: [UInt64]
    /// The endpoint of the attempt in progress, or of the next one.
    public private(set) var current = 0
    /// The endpoint of the last good CONNACK (in memory: at start, list order decides).
    public private(set) var lastGood: Int?
    public var switchJitterMillis: UInt64 = 1_000

    public init(count: Int, backoff: ReconnectBackoff = ReconnectBackoff()) {
        precondition(count >= 1, "at least one endpoint")
        self.count = count
        backoffs = Array(repeating: backoff, count: count)
        notBefore = Array(repeating: 0, count: count)
    }

    /// The current endpoint's backoff (what a one-endpoint link always had).
    public var currentBackoff: ReconnectBackoff { backoffs[current] }

    /// The attempt at `current`, or the connection there, failed at `nowMillis`. Picks the next
    /// endpoint (now `current`) and returns when to try it. `unitRandom` is called once for the
    /// failed endpoint's backoff jitter and, only on a switch to an endpoint due at once, a
    /// second time for the switch jitter.
    public mutating func failed(nowMillis: UInt64, unitRandom: () -> Double) -> UInt64 {
        let failed = current
        notBefore[failed] = nowMillis + backoffs[failed].nextDelayMillis(unitRandom: unitRandom())
        let next = nextEndpoint(after: failed, nowMillis: nowMillis)
        current = next
        guard next != failed else { return notBefore[next] }
        if notBefore[next] > nowMillis { return notBefore[next] }
        let spread = Double(switchJitterMillis) * min(max(unitRandom(), 0), 1)
        return nowMillis + UInt64(spread)
    }

    /// A good CONNACK at `current`: its backoff starts over and it becomes the preferred one.
    public mutating func connected() {
        backoffs[current].reset()
        notBefore[current] = 0
        lastGood = current
    }

    /// Earliest "not before" first, every endpoint already due counting as due now; ties to the
    /// last good endpoint, then list order after `failed`.
    private func nextEndpoint(after failed: Int, nowMillis: UInt64) -> Int {
        let due = { (i: Int) in max(notBefore[i], nowMillis) }
        var order = (1...count).map { (failed + $0) % count }  // failed + 1, ..., failed
        if let lastGood, let at = order.firstIndex(of: lastGood) {
            order.remove(at: at)
            order.insert(lastGood, at: 0)
        }
        var best = order[0]
        for candidate in order.dropFirst() where due(candidate) < due(best) { best = candidate }
        return best
    }
}

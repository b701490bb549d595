// Group commit: many producers enqueue at once, one of them (the leader) writes everything
// waiting in a single transaction, and all return after that one fsync. A producer returns
// only when its message is on disk, so "enqueued" always means "durable".

public final class GroupCommitter: @unchecked Sendable {
    // @unchecked Sendable: every mutable field below is guarded by `lock`.
    private let outbox: SQLiteOutbox
    private let budget: OutboxBudget
    private let lock = Lock()
    /// Broadcast when a leader has stored its batch's results.
    private let committed = Condition()
    private var waiting: [(ticket: UInt64, entry: OutboxEntry)] = []
    private var nextTicket: UInt64 = 1
    private var results: [UInt64: Result<Int64, Error>] = [:]
    private var leaderActive = false
    private var commitCount = 0

    public init(outbox: SQLiteOutbox, budget: OutboxBudget = OutboxBudget()) {
        self.outbox = outbox
        self.budget = budget
    }

    /// Transactions committed so far (for the benchmark: messages per commit).
    public var commits: Int { lock.withLock { commitCount } }

    /// Durably enqueues `entry` and returns its outbox ID.
    public func enqueue(_ entry: OutboxEntry) throws -> Int64 {
        guard let id = try enqueue([entry]).first else { throw StorageError.invalidArgument("enqueue returned no ID") }
        return id
    }

    /// Durably enqueues a burst from one producer (kept together and in order) and returns
    /// their outbox IDs. It shares its commit with whatever else is waiting.
    public func enqueue(_ entries: [OutboxEntry]) throws -> [Int64] {
        guard !entries.isEmpty else { return [] }
        lock.lock()
        let first = nextTicket
        for entry in entries {
            waiting.append((nextTicket, entry))
            nextTicket += 1
        }
        let tickets = first..<nextTicket
        while true {
            // A burst is appended under the lock, so one leader always takes it whole: when its
            // first result is in, all of them are.
            if results[tickets.lowerBound] != nil {
                let outcome = tickets.compactMap { results.removeValue(forKey: $0) }
                lock.unlock()
                guard outcome.count == tickets.count else { throw StorageError.invalidArgument("a burst was split across commits") }
                return try outcome.map { try $0.get() }
            }
            if !leaderActive {
                leaderActive = true
                let batch = waiting
                waiting.removeAll()
                lock.unlock()
                let outcome = commit(batch)
                lock.lock()
                for (ticket, result) in outcome { results[ticket] = result }
                commitCount += 1
                leaderActive = false
                committed.broadcast()
                continue
            }
            committed.wait(lock)
        }
    }

    /// One transaction for the whole batch; if it fails, every message in it gets the error
    /// (none of them was written).
    private func commit(_ batch: [(ticket: UInt64, entry: OutboxEntry)]) -> [(UInt64, Result<Int64, Error>)] {
        do {
            let ids = try outbox.store.write { transaction in
                // The budget is checked once per batch, not once per message.
                let ids = try batch.map { try transaction.enqueue($0.entry, budget: nil) }
                try transaction.shed(toFit: budget)
                return ids
            }
            return zip(batch, ids).map { ($0.ticket, .success($1)) }
        } catch {
            return batch.map { ($0.ticket, .failure(error)) }
        }
    }
}

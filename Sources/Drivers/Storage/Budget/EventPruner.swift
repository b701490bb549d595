// The event log's deletions for the store budget, run inside a caller's transaction. Oldest
// first within one retention class and one side of the published cursor; the sequence counter
// and the published cursor are never touched, so numbers are never reused and "published
// through N" keeps its meaning (an unpublished event that had to go is deleted with its outbox
// row and counted, see `StoreNotice.pruningStarted`).
import Protocol

/// Which slice of the log a batch takes from: a retention class, published or not.
struct PruneSlice: Hashable, Sendable {
    let retention: EventRetention
    let unpublished: Bool

    /// The order in which room is made: what already reached the cloud goes first (the cloud
    /// keeps it), then unpublished events from the least to the most important.
    static let sizeOrder: [PruneSlice] =
        EventRetention.allCases.map { PruneSlice(retention: $0, unpublished: false) }
        + EventRetention.allCases.map { PruneSlice(retention: $0, unpublished: true) }
}

enum EventPruner {
    struct Batch {
        var deleted = 0
        /// Where the next batch of this slice starts. By size: nothing of the slice is left at
        /// or below it. By age: what is left there is not age-prunable (its time was not
        /// trusted). Either way the next batch does not rescan the table.
        var cursor: Int64
        /// Nothing more to do in this slice now (no rows left, or by age none old enough).
        var exhausted = false
    }

    /// Sequence numbers one batch looks at, at most: the class is not indexed, so this is what
    /// bounds the work of a batch when the slice's rows are rare (or gone).
    static let window: Int64 = 4096

    /// Deletes up to `limit` events of `slice` with a sequence above `cursor` (and within the
    /// window after it), oldest first. `olderThan`: only events whose trusted time is before it,
    /// stopping at the first trusted younger one (trusted time only moves forward, so nothing
    /// after it is older); events whose time was not trusted have no age and are skipped.
    static func pruneBatch(_ slice: PruneSlice, after cursor: Int64, olderThan: Int64?, limit: Int,
                           connection: Connection) throws -> Batch {
        let published = try EventLog.publishedThrough(connection)
        // Never a window over numbers pruned long ago (the cursor starts at 0 in each process).
        var oldest: Int64 = 0
        if case .integer(let seq)? = try connection.scalar("SELECT MIN(seq) FROM events") { oldest = seq - 1 }
        let lower = max(slice.unpublished ? max(cursor, published) : cursor, oldest)
        let upper = min(slice.unpublished ? try EventLog.lastSequence(connection) : published, lower + window)
        var batch = Batch(cursor: cursor)
        guard lower < upper else {
            batch.exhausted = true
            return batch
        }
        let rows = try connection.rows("""
            SELECT seq, uuid, time_seconds, time_trusted FROM events
            WHERE seq > ?1 AND seq <= ?2 AND \(EventRetention.sqlExpression) = ?3 ORDER BY seq LIMIT ?4
            """, [.integer(lower), .integer(upper), .integer(slice.retention.rawValue), .integer(Int64(limit))])
        if slice.unpublished { try connection.run("INSERT OR IGNORE INTO event_prune_permit (id) VALUES (1)") }
        var stopped = false
        for row in rows {
            guard row.count == 4, case .integer(let seq) = row[0], case .integer(let time) = row[2],
                  case .integer(let trusted) = row[3] else { continue }
            if let olderThan {
                if trusted != 1 {
                    batch.cursor = seq
                    continue
                }
                if time >= olderThan {
                    stopped = true
                    break
                }
            }
            try connection.run("DELETE FROM events WHERE seq = ?1", [.integer(seq)])
            // Its copy waiting for the broker goes with it: no message for an event the car
            // no longer has (the cloud learns the count from the prune event instead).
            if slice.unpublished, case .text(let uuid) = row[1] {
                try connection.run("DELETE FROM outbox WHERE uuid = ?1", [.text(uuid)])
            }
            batch.deleted += 1
            batch.cursor = seq
        }
        if slice.unpublished { try connection.run("DELETE FROM event_prune_permit") }
        if !stopped && rows.count < limit {
            // The window held no more rows of this slice: the next batch starts after it.
            batch.cursor = max(batch.cursor, upper)
            let end = slice.unpublished ? try EventLog.lastSequence(connection) : published
            batch.exhausted = upper >= end
        }
        batch.exhausted = batch.exhausted || stopped
        if batch.deleted > 0 {
            try bump("pruned_\(slice.retention)", by: batch.deleted, connection)
            if slice.unpublished { try bump("pruned_unpublished", by: batch.deleted, connection) }
        }
        return batch
    }

    /// What pruning removed since the database was created.
    static func totals(_ connection: Connection) throws -> PrunedTotals {
        var totals = PrunedTotals()
        for row in try connection.rows("SELECT name, value FROM counters WHERE name LIKE 'pruned_%'") {
            guard row.count == 2, case .text(let name) = row[0], case .integer(let value) = row[1] else { continue }
            switch name {
            case "pruned_noise": totals.noise = value
            case "pruned_ordinary": totals.ordinary = value
            case "pruned_critical": totals.critical = value
            case "pruned_unpublished": totals.unpublished = value
            default: break
            }
        }
        return totals
    }

    private static func bump(_ name: String, by count: Int, _ connection: Connection) throws {
        try connection.run("INSERT OR IGNORE INTO counters (name, value) VALUES (?1, 0)", [.text(name)])
        try connection.run("UPDATE counters SET value = value + ?2 WHERE name = ?1", [.text(name), .integer(Int64(count))])
    }
}

/// Events deleted by pruning, by class; `unpublished` counts those of them that never reached
/// the cloud.
public struct PrunedTotals: Equatable, Sendable {
    public var noise: Int64 = 0
    public var ordinary: Int64 = 0
    public var critical: Int64 = 0
    public var unpublished: Int64 = 0

    public var total: Int64 { noise + ordinary + critical }

    var json: String {
        #"{"noise":\#(noise),"ordinary":\#(ordinary),"critical":\#(critical),"unpublished":\#(unpublished)}"#
    }
}

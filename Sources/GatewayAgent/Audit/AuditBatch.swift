// Group commit for the agent's own audit rows. The loop thread adds the rows of one loop round
// here and commits them in ONE transaction (one fdatasync) at the round's end; CarService holds
// the round's sends, actuations and link closes until that commit has returned. Under load a
// round carries many sessions, so the fsync cost is shared instead of paid per row.
//
// A failed commit is logged and the agent keeps serving answers (the rows are dropped, the
// count says how many), but `commit` says it failed and CarService then moves no actuator for
// that round: an access decision that is not in the log must not open a door (a dropped events
// table, a broken disk). The store keeps a reserve for access decisions, so a full disk alone
// does not fail these commits.
import Drivers

/// Where a batch goes: the store in the agent (events and their outbox rows, one transaction);
/// tests wrap it to look at the world while a commit is in progress, or to fail it.
protocol AuditLogWriter {
    func appendEvents(_ events: [NewEvent]) throws
    /// After a failed append: puts back schema objects that were dropped (the events table),
    /// with their own event. Returns what it recreated (empty: nothing was missing).
    func repairAfterFailedAppend() throws -> [String]
}

extension AuditLogWriter {
    func repairAfterFailedAppend() throws -> [String] { [] }
}

extension CarStore: AuditLogWriter {
    func appendEvents(_ events: [NewEvent]) throws {
        try write { transaction in
            for event in events { try transaction.appendEvent(event) }
        }
    }

    func repairAfterFailedAppend() throws -> [String] { try repairMissingSchema() }
}

/// Commit counters: rows per commit is the figure the benchmark and tests report.
struct AuditCommitStats: Equatable, Sendable {
    /// Transactions committed (failed ones are not counted here).
    var commits = 0
    /// Rows committed.
    var rows = 0
    /// The largest batch committed.
    var largestBatch = 0
    /// Commits that failed, and the rows they carried (not written).
    var failedCommits = 0
    var rowsLost = 0

    var rowsPerCommit: Double { commits == 0 ? 0 : Double(rows) / Double(commits) }

    /// For the console and the stop line, e.g. "1200 rows in 80 commits (15.0 per commit,
    /// largest 41)".
    static func line(_ stats: AuditCommitStats) -> String {
        let perCommit = (stats.rowsPerCommit * 10).rounded() / 10
        var text = "\(stats.rows) rows in \(stats.commits) commits (\(perCommit) per commit, largest \(stats.largestBatch))"
        if stats.failedCommits > 0 { text += ", \(stats.failedCommits) failed commits lost \(stats.rowsLost) rows" }
        return text
    }
}

final class AuditBatch {
    private let writer: any AuditLogWriter
    private let log: AgentLog
    private var pending: [NewEvent] = []
    private(set) var stats = AuditCommitStats()

    init(writer: any AuditLogWriter, log: AgentLog) {
        self.writer = writer
        self.log = log
    }

    var isEmpty: Bool { pending.isEmpty }
    var count: Int { pending.count }

    func add(_ event: NewEvent) { pending.append(event) }

    /// Writes everything added since the last commit in one transaction; nothing when empty.
    /// False when the rows could not be written (they are dropped and counted).
    @discardableResult
    func commit() -> Bool {
        guard !pending.isEmpty else { return true }
        let batch = pending
        pending.removeAll(keepingCapacity: true)
        do {
            try writer.appendEvents(batch)
            stats.commits += 1
            stats.rows += batch.count
            stats.largestBatch = max(stats.largestBatch, batch.count)
            return true
        } catch {
            stats.failedCommits += 1
            stats.rowsLost += batch.count
            log.error("audit: \(batch.count) event(s) could not be written to the event log: \(error)")
            repairStore()
            return false
        }
    }

    /// A dropped events table would refuse every access decision until a restart: the
    /// structure is put back now (with a storeRepaired event). The failed rows stay lost and
    /// the actions they carried stay refused.
    private func repairStore() {
        do {
            let recreated = try writer.repairAfterFailedAppend()
            if !recreated.isEmpty {
                log.error("audit: storeRepaired: recreated missing \(recreated.joined(separator: ", ")) in the store (rows they held are lost; event logged)")
            }
        } catch {
            log.error("audit: store repair failed: \(error)")
        }
    }
}

// Where the engine's audit records go: a log line and a row in the store's event log. Rows are
// not written one by one: they join the loop round's batch (AuditBatch), which CarService
// commits before it lets any of the round's effects out. What AuditCoalescer folds gets no
// row of its own and no log line; its count reaches the log in a summary row.
import Drivers
import Protocol

final class AuditSink {
    private let batch: AuditBatch
    private let log: AgentLog
    private var coalescer: AuditCoalescer
    /// A commit failed since the last `commitRound`.
    private var failedSinceRoundEnd = false

    init(writer: any AuditLogWriter, log: AgentLog, coalescer: AuditCoalescer = AuditCoalescer()) {
        self.batch = AuditBatch(writer: writer, log: log)
        self.log = log
        self.coalescer = coalescer
    }

    /// Rows waiting for `commit`.
    var hasPending: Bool { !batch.isEmpty }
    var pendingCount: Int { batch.count }
    var stats: AuditCommitStats { batch.stats }

    func record(_ record: AuditRecord) {
        if record.event == .ownerEnrolled || record.event == .revocationApplied {
            // The keychain wrote this event in the same transaction as the rows it changed.
            log.info("audit: \(record)")
            return
        }
        let (verdict, summaries) = coalescer.admit(record)
        let time = EventTime(seconds: record.wallSeconds, trusted: record.wallClockTrusted)
        for summary in summaries { add(summary, time: time) }
        guard verdict == .write else { return }
        log.line(record.logLevel, "audit: \(record)")
        batch.add(AuditEventMapping.event(for: record))
    }

    /// Summary rows of coalescing windows that have ended (call about once a second, and with
    /// `force` when stopping), so no count waits long for its row. They join the batch.
    func flush(now: ProtocolTime, force: Bool = false) {
        let time = EventTime(seconds: now.wallSeconds, trusted: now.wallClockTrusted)
        for summary in coalescer.due(nowMillis: now.monotonicMillis, force: force) { add(summary, time: time) }
    }

    /// One transaction for every row added since the last commit; false when it failed.
    @discardableResult
    func commit() -> Bool {
        let written = batch.commit()
        if !written { failedSinceRoundEnd = true }
        return written
    }

    /// The commit at a loop round's end: true only when it and every commit since the previous
    /// round's end were written, so an access decision whose row an earlier, failed commit of
    /// the same round carried cannot count as recorded.
    func commitRound() -> Bool {
        let written = commit()
        defer { failedSinceRoundEnd = false }
        return written && !failedSinceRoundEnd
    }

    private func add(_ summary: AuditCoalescer.Summary, time: EventTime) {
        let whose: String
        switch summary.scope {
        case .rateLimited: whose = "rateLimited refusals"
        case .key(let keyID): whose = "routine records of key \(keyID?.description ?? "-")"
        }
        // The summary row is in the event log; in the agent log it is chatter (debug), like
        // the routine records it stands for.
        log.debug("audit: \(summary.counts.total) more \(whose) not logged one by one (summary row written)")
        batch.add(AuditEventMapping.summary(summary, time: time))
    }
}

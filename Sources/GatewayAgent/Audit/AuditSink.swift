// Where the engine's audit records go: one log line each, and a row in the store's event log.
// A store failure is logged and the agent keeps serving: refusing to open doors because the
// log disk is full would be worse than a gap the log line itself records.
//
// `rateLimited` refusals are the one record an attacker can produce without limit (every
// blocked attempt yields one), and each row costs a synced write. So at most one of them is
// written per interval; the others are counted, and the count goes into the next one written
// (or into a summary row once the interval has passed, see `flush`).
import Drivers
import Protocol

final class AuditSink {
    static let rateLimitedIntervalMillis: UInt64 = 10_000

    private let store: CarStore
    private let log: AgentLog
    private var lastRateLimited: AuditRecord?
    private var suppressed = 0

    init(store: CarStore, log: AgentLog) {
        self.store = store
        self.log = log
    }

    func record(_ record: AuditRecord) {
        if record.event == .ownerEnrolled || record.event == .revocationApplied {
            // The keychain wrote this event in the same transaction as the rows it changed.
            log.info("audit: \(record)")
            return
        }
        if record.event == .rejected, record.fault == .rateLimited {
            if let last = lastRateLimited, record.monotonicMillis < last.monotonicMillis + Self.rateLimitedIntervalMillis {
                suppressed += 1
                return
            }
            lastRateLimited = record
            write(record, suppressed: takeSuppressed())
            return
        }
        write(record, suppressed: 0)
    }

    /// Writes the count of refusals left out once their interval is over (call about once a
    /// second, and with `force` when stopping), so none goes unrecorded for long.
    func flush(now: ProtocolTime, force: Bool = false) {
        guard suppressed > 0, let last = lastRateLimited,
              force || now.monotonicMillis >= last.monotonicMillis + Self.rateLimitedIntervalMillis else { return }
        let count = takeSuppressed()
        lastRateLimited = nil
        log.info("audit: \(count) more rateLimited refusals not logged")
        append(AuditEventMapping.suppressedRefusals(count, fault: .rateLimited, now: now))
    }

    private func takeSuppressed() -> Int {
        defer { suppressed = 0 }
        return suppressed
    }

    private func write(_ record: AuditRecord, suppressed: Int) {
        log.line(record.logLevel, "audit: \(record)" + (suppressed > 0 ? " (and \(suppressed) more like it not logged)" : ""))
        append(AuditEventMapping.event(for: record, suppressed: suppressed))
    }

    private func append(_ event: NewEvent) {
        do {
            try store.appendEvent(event)
        } catch {
            log.info("audit: could not append to the event log: \(error)")
        }
    }
}

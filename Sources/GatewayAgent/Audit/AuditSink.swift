// Where the engine's audit records go: one log line each, and a row in the store's event log.
// A store failure is logged and the agent keeps serving: refusing to open doors because the
// log disk is full would be worse than a gap the log line itself records.
import Drivers
import Protocol

struct AuditSink {
    let store: CarStore
    let log: AgentLog

    func record(_ record: AuditRecord) {
        log.info("audit: \(record)")
        do {
            try store.appendEvent(AuditEventMapping.event(for: record))
        } catch {
            log.info("audit: could not append to the event log: \(error)")
        }
    }
}

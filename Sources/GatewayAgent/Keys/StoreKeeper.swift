// The store budget in the agent: one bounded maintenance round per housekeeping tick (pruning
// in batches, the reserve, a full disk noticed), and one log line per thing an operator should
// know. The events the budget writes (prune, disk full) are written by the store itself.
import Drivers
import Protocol

final class StoreKeeper {
    private let store: CarStore
    private let log: AgentLog

    init(store: CarStore, log: AgentLog) {
        self.store = store
        self.log = log
    }

    /// What opening the store did on the way (a full disk, the reserve released or created),
    /// and the budget in force: stdout, with the other start-up lines.
    func startupLines(_ budget: StoreBudget) -> [String] {
        var lines = store.startNotices.map { "carkey-agent: store: \($0)" }
        if let status = try? store.spaceStatus() {
            lines.append("carkey-agent: store: \(status.usedBytes >> 10) KiB of \(budget.maxDatabaseBytes >> 10) KiB budget in use, "
                         + "events kept \(budget.maxEventAgeSeconds / 86_400) days (access decisions \(budget.maxCriticalEventAgeSeconds / 86_400)), "
                         + (status.reservePresent ? "reserve \(budget.reserveBytes >> 10) KiB in place" : "no reserve file")
                         + (status.diskFull ? ", DISK FULL" : ""))
        }
        return lines
    }

    func tick(now: ProtocolTime) {
        let notices = store.maintainBudget(now: EventTime(seconds: now.wallSeconds, trusted: now.wallClockTrusted),
                                           nowMillis: now.monotonicMillis)
        for notice in notices {
            switch notice {
            case .diskFull, .reserveReleased, .reserveNotCreated: log.warn("store: \(notice)")
            default: log.info("store: \(notice)")
            }
        }
    }
}

// The `stats` control command's numbers: what the agent has cost since it started (syncs,
// bytes written, events appended) and what waits (outbox depth). Benchmarks and long-run tests
// read them through the control socket, so the figures they report come from inside the agent
// rather than from guesses outside it.
#if canImport(Glibc)
import Glibc
#endif
import Drivers

/// Group-commit counters of the agent's own write path. Whoever owns that path provides them
/// (an object, not a stored closure: see EventRouter.swift); until then the fields read "none".
protocol AgentCommitCounters: AnyObject {
    /// Write transactions committed for the agent's own events.
    var commits: UInt64 { get }
    /// Events those commits carried (events per commit = this / commits).
    var eventsCommitted: UInt64 { get }
}

/// Something the agent drops by design rather than let it wait on the loop (issue 14): console
/// answer lines nobody read, admitted cloud messages the bounded mailbox shed. Since start.
protocol AgentDropCounter: AnyObject {
    var droppedSinceStart: Int { get }
}

extension AgentConsole: AgentDropCounter {
    var droppedSinceStart: Int { droppedLines }
}

extension AgentCloud: AgentDropCounter {
    var droppedSinceStart: Int { snapshot.inboundShed }
}

final class AgentStats {
    private let store: CarStore
    private let startedAtMillis: UInt64
    /// The event log's last sequence number when the agent started: events appended since are
    /// the difference (sequence numbers only grow, so pruning old events does not skew it).
    private let firstSequence: Int64
    var commitCounters: (any AgentCommitCounters)?
    /// The cloud link when the agent runs with one (nil: offline, "cloud-connected none").
    var cloud: AgentCloud?
    /// Console output lines dropped (nil: no console, "console-dropped-lines none").
    var consoleOutput: (any AgentDropCounter)?
    /// Cloud messages shed by the inbound mailbox (nil: no cloud link).
    var cloudInbound: (any AgentDropCounter)?

    init(store: CarStore) throws {
        self.store = store
        startedAtMillis = Self.monotonicMillis()
        firstSequence = try store.lastEventSequence()
    }

    /// One field per line, "name value"; value "none" when it cannot be known (an integer
    /// otherwise). Names are stable: scripts and `carkey-agent stats --json` read them.
    func fields() -> [(name: String, value: Int64?)] {
        // The whole process's storage I/O, start-up (migrations, repairs) included.
        let syncs = StorageSyncs.counters
        // One read on the query-only connection; a failure shows as "none", never as 0.
        let current = try? store.read { transaction in (try transaction.lastEventSequence(), try transaction.outboxDepth()) }
        return [
            ("uptime-ms", Int64(Self.monotonicMillis() - startedAtMillis)),
            ("syncs", Int64(syncs.syncs)),
            ("wal-syncs", Int64(syncs.walSyncs)),
            ("sync-time-us", Int64(syncs.syncNanos / 1000)),
            ("bytes-written", Int64(syncs.bytesWritten)),
            ("events-appended", current.map { $0.0 - firstSequence }),
            ("outbox-depth", current.map { Int64($0.1) }),
            // Filled in by the agent's group commit (see AgentCommitCounters).
            ("commits", commitCounters.map { Int64($0.commits) }),
            ("events-committed", commitCounters.map { Int64($0.eventsCommitted) }),
            ("sync-delay-us", Int64(StorageSyncs.addedSyncDelayMicros)),
            ("cloud-connected", cloud.map { $0.snapshot.connected ? 1 : 0 }),
            // What a reader that stopped reading or a flood cost (counted, never waited on).
            ("console-dropped-lines", consoleOutput.map { Int64($0.droppedSinceStart) }),
            ("cloud-inbound-shed", cloudInbound.map { Int64($0.droppedSinceStart) }),
        ]
    }

    var lines: [String] { fields().map { "\($0.name) \($0.value.map(String.init) ?? "none")" } }

    private static func monotonicMillis() -> UInt64 {
        var now = timespec()
        clock_gettime(CLOCK_MONOTONIC, &now)
        return UInt64(now.tv_sec) * 1000 + UInt64(now.tv_nsec) / 1_000_000
    }
}

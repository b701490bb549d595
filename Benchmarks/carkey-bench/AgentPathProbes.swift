// Two probes of the agent's real path that the timed rounds cannot give:
//
// - backlog drain: the broker stops, phones keep the agent writing events into its outbox, the
//   broker comes back; the rate from the first to the last arrival of that backlog is what the
//   durable publish path can carry when sessions are not what limits it (the session-bound
//   event rate is ~3 events per session, far below any publish limit).
// - user/system CPU split of the agent from /proc/PID/stat: system time is fsync, poll and
//   socket work; user time is crypto, SQLite and Swift.
#if canImport(Glibc)
import Glibc
#endif
import Protocol
import TestHarness

enum AgentPathProbes {
    struct Drain { let events: Int; let perSecond: Double }

    static func backlogDrain(_ phones: [PhoneConfiguration], _ stateDirectory: String, agent: AgentProcess,
                             sampler: AgentSampler, broker: MosquittoBroker, seconds: Double) throws -> Drain {
        let before = try sampler.lastEventSequence()
        broker.stop()
        _ = try AgentPathBench.load(phones, stateDirectory, agent: agent, seconds: seconds)
        let written = try sampler.lastEventSequence()
        try broker.start()
        // A fresh subscriber: the old one's session ended with the broker.
        let counter = try BrokerEventCounter(url: broker.url, filter: "vehicles/+/events")
        // The agent's reconnect backoff (2 s and up) comes before the first arrival; the rate
        // is taken from the first arrival on.
        guard counter.wait(seconds: 120, until: { $0.highestSequence >= Int(written) && $0.distinctSequences >= Int(written - before) }) else {
            throw BenchFailure(description: "backlog of \(written - before) events did not drain: \(counter.snapshot)")
        }
        let snapshot = counter.snapshot
        return Drain(events: Int(written - before), perSecond: Double(snapshot.distinctSequences) / max(snapshot.lastArrival - snapshot.firstArrival, 0.001))
    }

    /// (user, system) CPU milliseconds of `pid`, all threads.
    static func cpuSplit(_ pid: pid_t) -> (user: Int, system: Int) {
        guard let file = fopen("/proc/\(pid)/stat", "r") else { return (0, 0) }
        defer { fclose(file) }
        var buffer = [UInt8](repeating: 0, count: 1024)
        let n = fread(&buffer, 1, buffer.count, file)
        let text = String(decoding: buffer[0..<max(0, n)], as: UTF8.self)
        guard let close = text.lastIndex(of: ")") else { return (0, 0) }
        let fields = text[text.index(after: close)...].split(separator: " ")
        guard fields.count > 12, let user = Int(fields[11]), let system = Int(fields[12]) else { return (0, 0) }
        let ticks = max(1, sysconf(Int32(_SC_CLK_TCK)))
        return (user * 1000 / ticks, system * 1000 / ticks)
    }
}

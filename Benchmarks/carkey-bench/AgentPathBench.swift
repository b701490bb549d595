// The agent's real path, end to end: the release carkey-agent (`run --simulate --mqtt`, its own
// poll loop, store, outbox and cloud thread) against a local mosquitto, phones from the load
// generator (Tests/Harness) doing complete sessions over the link socket. From the same run, in
// interleaved rounds so a noisy neighbour hits every figure:
//
//   sessions/s                 ok visits per wall second
//   agent CPU per session      /proc/PID/stat (all agent threads) delta / ok visits, against the
//                              raw crypto of one car-side handshake timed on a thread CPU clock
//                              (target at most 2x)
//   durable events/s           distinct event sequences arriving at a subscriber, against
//                              mosquitto_pub -q 1 (not durable) to the same broker, counted by
//                              the same kind of subscriber (target at least 0.5)
//   messages per fsync         events written / syncs, both from the agent's own `stats`
//                              counters (the sync-counting VFS) in a separate round (target 20)
#if canImport(Glibc)
import Glibc
#endif
import CBenchReference
import Protocol
import TestHarness

enum AgentPathBench {
    static let cpuTarget = 2.0
    static let pubTarget = 0.5
    static let perFsyncTarget = 20.0

    /// 8 phones fill the agent's 8 links; 4 show the path without contention for link slots.
    /// Each run: phones, and the routine audit rows itemised per key per minute. With the
    /// product's default (24) a key's session noise is folded into one summary row a minute, so
    /// the event log sees a few rows per hundred sessions; "itemised" writes every record, which
    /// is what shows the durable path (store, outbox, broker) at full event rate.
    static let configurations: [(phones: Int, routinePerMinute: Int?)] = [(4, nil), (8, nil), (8, 1_000_000)]

    static func run(rounds: Int = 3, secondsPerRound: Double = 8) throws {
        let agentPath = AgentProcess.sibling("carkey-agent")
        guard access(agentPath, X_OK) == 0 else {
            Bench.emit([("benchmark", "agent_path"), ("skipped", "no \(agentPath): build it with -c release --product carkey-agent")])
            return
        }
        for (phones, routine) in configurations {
            try measure(agentPath: agentPath, phones: phones, routinePerMinute: routine, rounds: rounds, secondsPerRound: secondsPerRound)
        }
    }

    static func measure(agentPath: String, phones: Int, routinePerMinute: Int?, rounds: Int, secondsPerRound: Double) throws {
        let broker = try MosquittoBroker()
        try broker.start()
        defer { broker.stop() }
        let folder = TestFolders.make(prefix: "carkey-bench-agent")
        defer { TestFolders.remove(folder) }
        let stateDirectory = folder + "/state"
        let events = try BrokerEventCounter(url: broker.url, filter: "vehicles/+/events")
        let agent = try AgentProcess(agentPath, ["run", "--simulate", "--state-dir", stateDirectory, "--mqtt", broker.url, "--clock-sync", "yes"]
                                     + (routinePerMinute.map { ["--audit-routine-per-minute", String($0)] } ?? []))
        defer { agent.stop() }
        guard agent.wait(timeoutSeconds: 30, until: { access(stateDirectory + "/control.sock", F_OK) == 0 }) else {
            throw BenchFailure(description: "agent did not start: \(agent.stderrTail)")
        }
        let configurations = try LoadEnrollment.enrollOwners(count: phones, stateDirectory: stateDirectory)
        let sampler = AgentSampler(pid: agent.pid, stateDirectory: stateDirectory)
        // Warm-up: caches, the first WAL checkpoint, the cloud link connected and draining.
        _ = try load(configurations, stateDirectory, agent: agent, seconds: 2)

        var sessionRates: [Double] = [], cpuPerSession: [Double] = [], eventRates: [Double] = []
        var pubRates: [Double] = [], rawCrypto: [Double] = [], eventsPerSession: [Double] = []
        var outcomes: [LoadOutcome: Int] = [:], systemShare: [Double] = []
        for round in 0..<rounds {
            let splitBefore = AgentPathProbes.cpuSplit(agent.pid)
            let before = ProcessStats.sample(agent.pid), delivered = events.snapshot, written = try sampler.lastEventSequence()
            let result = try load(configurations, stateDirectory, agent: agent, seconds: secondsPerRound)
            let after = ProcessStats.sample(agent.pid), splitAfter = AgentPathProbes.cpuSplit(agent.pid)
            let user = splitAfter.user - splitBefore.user, system = splitAfter.system - splitBefore.system
            systemShare.append(Double(system) / Double(max(1, user + system)))
            // Events written in the window, counted when they have arrived.
            let writtenAfter = try sampler.lastEventSequence()
            _ = events.wait(seconds: 30) { $0.distinctSequences >= Int(writtenAfter) }
            let arrived = events.snapshot
            guard let before, let after, result.tally.ok > 0 else { throw BenchFailure(description: "round \(round): no session: \(result.tally)") }
            sessionRates.append(Double(result.tally.ok) / result.seconds)
            cpuPerSession.append(Double(after.cpuMillis - before.cpuMillis) / Double(result.tally.ok))
            // Arrival rate from the first to the last arrival of this window's events.
            let span = max(arrived.lastArrival - max(delivered.lastArrival, result.start), 0.001)
            eventRates.append(Double(arrived.distinctSequences - delivered.distinctSequences) / span)
            eventsPerSession.append(Double(writtenAfter - written) / Double(result.tally.ok))
            outcomes.merge(result.tally.counts, uniquingKeysWith: +)
            pubRates.append(try mosquittoPubRate(broker: broker, messages: 5000))
            rawCrypto.append(rawHandshakeCryptoCost(rounds: 1).medianMicros / 1000)
        }
        let fsync = try messagesPerFsync(configurations, stateDirectory, agent: agent, agentPath: agentPath, sampler: sampler, seconds: 5)
        // Last: it restarts the broker, which ends the counting subscriber's session.
        let drain = try AgentPathProbes.backlogDrain(configurations, stateDirectory, agent: agent, sampler: sampler,
                                                     broker: broker, seconds: 6)

        let cpu = Bench.median(cpuPerSession), raw = Bench.median(rawCrypto.sorted())
        let eventRate = Bench.median(eventRates), pubRate = Bench.median(pubRates)
        Bench.emit([
            ("benchmark", "agent_path"),
            ("path", "\(agentPath.contains("/release/") ? "release" : "debug") carkey-agent run --simulate --mqtt: link socket, poll loop, engine, store, outbox, cloud thread, local mosquitto"),
            ("phones", phones),
            ("audit_routine_rows", routinePerMinute.map { "itemised (\($0) per key per minute)" } ?? "default: 24 per key per minute, the rest folded into summaries"),
            ("agent_links", 8),
            ("sessions_per_sec", Bench.median(sessionRates)),
            ("sessions_per_sec_min", sessionRates.min() ?? 0),
            ("agent_cpu_ms_per_session", cpu),
            ("agent_cpu_ms_per_session_min", cpuPerSession.min() ?? 0),
            ("raw_handshake_crypto_ms", raw),
            ("raw_handshake_crypto_ms_min", rawCrypto.min() ?? 0),
            ("raw_crypto_source", "rawHandshakeCryptoCost: the same EVP operations in C, thread CPU clock"),
            ("cpu_ratio_vs_raw_crypto", cpu / raw),
            ("target_cpu_ratio", cpuTarget),
            ("meets_cpu_target", cpu / raw <= cpuTarget),
            ("agent_cpu_system_share", Bench.median(systemShare)),
            ("durable_events_per_sec", eventRate),
            ("events_per_ok_session", Bench.median(eventsPerSession)),
            ("mosquitto_pub_qos1_per_sec", pubRate),
            ("ratio_vs_mosquitto_pub", eventRate / pubRate),
            ("target_ratio_vs_mosquitto_pub", pubTarget),
            ("meets_pub_target", eventRate / pubRate >= pubTarget),
            ("backlog_drain_events", drain.events),
            ("backlog_drain_per_sec", drain.perSecond),
            ("backlog_ratio_vs_mosquitto_pub", drain.perSecond / pubRate),
            ("messages_per_fsync", fsync.perFsync),
            ("fsyncs", fsync.syncs),
            ("fsync_events", fsync.events),
            ("fsync_source", fsync.source),
            ("audit_commits", fsync.commits),
            ("audit_rows_per_commit", fsync.rowsPerCommit),
            ("target_messages_per_fsync", perFsyncTarget),
            ("meets_fsync_target", fsync.perFsync >= perFsyncTarget),
            ("outcomes", LoadTally(counts: outcomes).description),
            ("rounds", rounds),
            ("seconds_per_round", secondsPerRound),
        ])
    }

    struct LoadResult { let tally: LoadTally; let seconds: Double; let start: Double }

    /// All phones for `seconds`; the agent must still be alive afterwards.
    static func load(_ phones: [PhoneConfiguration], _ stateDirectory: String, agent: AgentProcess, seconds: Double) throws -> LoadResult {
        let generator = PhoneLoadGenerator(phones: phones, socketPath: stateDirectory + "/ble.sock",
                                           commands: Array(repeating: .status, count: 99) + [.unlock])
        let start = Monotonic.seconds()
        generator.start()
        usleep(UInt32(seconds * 1_000_000))
        generator.stop()
        generator.join()
        let elapsed = Monotonic.seconds() - start
        guard agent.isRunning else { throw BenchFailure(description: "the agent died under load: \(agent.stderrTail)") }
        return LoadResult(tally: generator.tally, seconds: elapsed, start: start)
    }

    /// mosquitto_pub -l at QoS 1, one connection, payloads the size of an event; the clock
    /// stops at the subscriber's last arrival, as it does for the agent's events.
    static func mosquittoPubRate(broker: MosquittoBroker, messages: Int) throws -> Double {
        let counter = try BrokerEventCounter(url: broker.url, filter: "bench/pub")
        let path = TestFolders.make(prefix: "carkey-bench-pub") + "/lines"
        defer { TestFolders.remove(String(path.dropLast(6))) }
        let padding = String(repeating: "x", count: 280)
        let lines = (0..<messages).map { "{\"i\":\($0),\"pad\":\"\(padding)\"}\n" }.joined()
        guard let file = fopen(path, "w") else { throw BenchFailure(description: "cannot write \(path)") }
        fputs(lines, file)
        fclose(file)
        let start = Monotonic.seconds()
        guard system("mosquitto_pub -h 127.0.0.1 -p \(broker.port) -t bench/pub -q 1 -l < '\(path)'") == 0 else {
            throw BenchFailure(description: "mosquitto_pub failed")
        }
        guard counter.wait(seconds: 30, until: { $0.messages >= messages }) else {
            throw BenchFailure(description: "mosquitto_pub: \(counter.snapshot.messages) of \(messages) arrived")
        }
        return Double(messages) / (counter.snapshot.lastArrival - start)
    }

    struct FsyncCount { let perFsync: Double; let syncs: Int; let events: Int; let commits: Int; let rowsPerCommit: Double; let source: String }

    /// Events written per sync while the phones run, from the agent's own counters (`stats`:
    /// every xSync of its SQLite files through the sync-counting VFS, WAL and checkpoints), and
    /// the audit batch's commits and rows per commit.
    static func messagesPerFsync(_ phones: [PhoneConfiguration], _ stateDirectory: String, agent: AgentProcess,
                                 agentPath: String, sampler: AgentSampler, seconds: Double) throws -> FsyncCount {
        let before = AgentStatsTool.read(binary: agentPath, stateDirectory: stateDirectory)
        let written = try sampler.lastEventSequence()
        _ = try load(phones, stateDirectory, agent: agent, seconds: seconds)
        let after = AgentStatsTool.read(binary: agentPath, stateDirectory: stateDirectory)
        let events = Int(try sampler.lastEventSequence() - written)
        func delta(_ name: String) -> Int { Int((after[name] ?? 0) - (before[name] ?? 0)) }
        let syncs = delta("syncs"), commits = delta("commits"), rows = delta("events-committed")
        return FsyncCount(perFsync: syncs > 0 ? Double(events) / Double(syncs) : -1, syncs: syncs, events: events,
                          commits: commits, rowsPerCommit: commits > 0 ? Double(rows) / Double(commits) : -1,
                          source: "carkey-agent stats (sync-counting VFS, all syncs of the agent)")
    }

    static func readText(_ path: String) -> String {
        guard let file = fopen(path, "r") else { return "" }
        defer { fclose(file) }
        var bytes = [UInt8](), chunk = [UInt8](repeating: 0, count: 4096)
        while true {
            let n = fread(&chunk, 1, chunk.count, file)
            if n <= 0 { return String(decoding: bytes, as: UTF8.self) }
            bytes += chunk[0..<n]
        }
    }
}

struct BenchFailure: Error, CustomStringConvertible {
    let description: String
}


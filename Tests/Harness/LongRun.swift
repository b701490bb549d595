// The long run: a real agent (`run --simulate --mqtt` to a real broker, clock pinned as
// synchronised) under phones doing complete visits for a session budget or a duration, sampled
// from /proc all along, then checked for what months of uptime need: it is alive and exits 0
// on SIGTERM, memory and per-session CPU do not creep, descriptors and threads come back to
// where they were, and every event it wrote reached the broker. The long-run test (make test)
// and `make soak-long` both run this; they differ only in size.
#if canImport(Glibc)
import Glibc
#endif
import Protocol

public struct LongRunPlan: Sendable {
    public var agentPath: String
    /// Stop after this many visits, or after `seconds`, whichever comes first.
    public var sessions: Int = .max
    public var seconds: Double = .infinity
    public var phones = 6
    /// Mostly status; a lock and an unlock now and then move the simulated actuator.
    public var commands: [CommandCode] = Array(repeating: .status, count: 49) + [.lock] + Array(repeating: .status, count: 49) + [.unlock]
    public var sampleEverySeconds = 0.5
    /// A "soak:" line every this many seconds (nil: none).
    public var printEverySeconds: Double?
    public var agentArguments: [String] = []
    /// Bounds of the checks.
    public var rssGrowthLimitBytes = 1 << 20
    public var cpuPerSessionFactor = 1.5

    public init(agentPath: String) { self.agentPath = agentPath }
}

public struct LongRunReport: Sendable {
    public var tally: LoadTally
    public var duration: Double
    public var samples: [AgentObservation]
    public var restBefore: ProcessSample
    public var restAfter: ProcessSample?
    public var exitStatus: Int32?
    public var eventsWritten: Int64
    public var delivered: BrokerEventCounter.Snapshot
    public var finalOutboxDepth: Int
    /// CPU milliseconds per visit in each quarter of the run (by visits).
    public var cpuPerSessionByQuarter: [Double]
    /// The phones' CPU per visit by quarter (the reference for the agent's).
    public var phonesCPUPerSessionByQuarter: [Double]
    /// Median RSS just after warm-up (second quarter) and over the last tenth.
    public var rssAfterWarmup: Int
    public var rssAtEnd: Int
    /// Every check that failed, in words; empty when the run passed.
    public var failures: [String]

    public init(tally: LoadTally, duration: Double, samples: [AgentObservation], restBefore: ProcessSample,
                restAfter: ProcessSample?, exitStatus: Int32?, eventsWritten: Int64, delivered: BrokerEventCounter.Snapshot,
                finalOutboxDepth: Int, cpuPerSessionByQuarter: [Double], phonesCPUPerSessionByQuarter: [Double] = [],
                failures: [String] = []) {
        self.phonesCPUPerSessionByQuarter = phonesCPUPerSessionByQuarter
        self.tally = tally
        self.duration = duration
        self.samples = samples
        self.restBefore = restBefore
        self.restAfter = restAfter
        self.exitStatus = exitStatus
        self.eventsWritten = eventsWritten
        self.delivered = delivered
        self.finalOutboxDepth = finalOutboxDepth
        self.cpuPerSessionByQuarter = cpuPerSessionByQuarter
        self.rssAfterWarmup = 0
        self.rssAtEnd = 0
        self.failures = failures
    }

    public var summary: String {
        let quarters = cpuPerSessionByQuarter.map { String(format1($0)) }.joined(separator: "/")
        let phones = phonesCPUPerSessionByQuarter.map { String(format1($0)) }.joined(separator: "/")
        let last = samples.last
        return "long-run: sessions \(tally.total) (\(tally)) in \(Int(duration)) s, "
            + "\(format1(Double(tally.total) / max(duration, 0.001))) sessions/s; "
            + "RSS after warm-up \(rssAfterWarmup / 1024) KiB, end \(rssAtEnd / 1024) KiB; "
            + "agent CPU ms/session by quarter \(quarters) (phones \(phones)); "
            + "fds \(restBefore.openDescriptors)->\(restAfter?.openDescriptors ?? -1), "
            + "threads \(restBefore.threads)->\(restAfter?.threads ?? -1); "
            + "DB \((last?.databaseBytes ?? 0) / 1024) KiB; outbox depth \(finalOutboxDepth); "
            + "events \(eventsWritten) written, \(delivered.distinctSequences) delivered, \(delivered.duplicates) duplicates; "
            + "exit \(exitStatus.map(String.init) ?? "none")"
    }
}

public enum LongRun {
    public static func run(_ plan: LongRunPlan) throws -> LongRunReport {
        let broker = try MosquittoBroker()
        try broker.start()
        defer { broker.stop() }
        let folder = TestFolders.make(prefix: "opencarkey-longrun")
        defer { TestFolders.remove(folder) }
        let stateDirectory = folder + "/state"
        let counter = try BrokerEventCounter(url: broker.url, filter: "vehicles/+/events")
        let agent = try AgentProcess(plan.agentPath, ["run", "--simulate", "--state-dir", stateDirectory, "--mqtt", broker.url,
                                                      "--clock-sync", "yes"] + plan.agentArguments)
        guard agent.wait(timeoutSeconds: 30, until: { access(stateDirectory + "/control.sock", F_OK) == 0 }) else {
            throw LongRunFailure(description: "agent did not start: \(agent.stderrTail)")
        }
        let phones = try LoadEnrollment.enrollOwners(count: plan.phones, stateDirectory: stateDirectory)
        let sampler = AgentSampler(pid: agent.pid, stateDirectory: stateDirectory)
        let restBefore = try rest(agent, sampler)

        let generator = PhoneLoadGenerator(phones: phones, socketPath: stateDirectory + "/ble.sock", commands: plan.commands,
                                           sessions: plan.sessions == .max ? nil : plan.sessions)
        let start = Monotonic.seconds()
        generator.start()
        var samples: [AgentObservation] = []
        var failures: [String] = []
        var nextPrint = plan.printEverySeconds ?? .infinity
        while !generator.isFinished {
            usleep(UInt32(plan.sampleEverySeconds * 1_000_000))
            let elapsed = Monotonic.seconds() - start
            guard let observation = sampler.observe(elapsed: elapsed, sessions: generator.completed, phonesCPUMillis: generator.phonesCPUMillis) else {
                failures.append("the agent died under load after \(generator.completed) sessions: \(agent.stderrTail.suffix(600))")
                generator.stop()
                break
            }
            samples.append(observation)
            if elapsed >= nextPrint {
                print(line(observation, counter.snapshot, generator.tally))
                fflush(nil)  // a soak is watched while it runs; stdout to a pipe is block-buffered
                nextPrint += plan.printEverySeconds ?? .infinity
            }
            if elapsed >= plan.seconds { generator.stop() }
        }
        generator.join()
        let duration = Monotonic.seconds() - start
        let tally = generator.tally

        // At rest first (the last links' close events are written when the agent reads the
        // hang-ups), then drained: the outbox is empty and every event in the log has arrived.
        let restAfter = agent.isRunning ? try? rest(agent, sampler) : nil
        let written = (try? sampler.lastEventSequence()) ?? 0
        _ = counter.wait(seconds: 60) { $0.distinctSequences >= Int(written) && sampler.outboxDepth == 0 }
        let finalDepth = sampler.outboxDepth
        let delivered = counter.snapshot
        let exitStatus = agent.stop(signal: SIGTERM, timeoutSeconds: 15)

        var report = LongRunReport(tally: tally, duration: duration, samples: samples, restBefore: restBefore, restAfter: restAfter,
                                   exitStatus: exitStatus, eventsWritten: written, delivered: delivered,
                                   finalOutboxDepth: finalDepth, cpuPerSessionByQuarter: cpuPerQuarter(samples),
                                   phonesCPUPerSessionByQuarter: cpuPerQuarter(samples, cpu: \.phonesCPUMillis), failures: failures)
        LongRunChecks.apply(plan, to: &report, stderrTail: agent.stderrTail)
        return report
    }

    /// Samples the agent once its descriptors and threads stop changing (links closed).
    static func rest(_ agent: AgentProcess, _ sampler: AgentSampler) throws -> ProcessSample {
        var previous: ProcessSample?
        for _ in 0..<50 {
            usleep(200_000)
            guard let sample = ProcessStats.sample(agent.pid) else { break }
            if let previous, previous.openDescriptors == sample.openDescriptors, previous.threads == sample.threads { return sample }
            previous = sample
        }
        guard let sample = ProcessStats.sample(agent.pid) else { throw LongRunFailure(description: "agent gone: \(agent.stderrTail)") }
        return sample
    }

    /// CPU per visit over each quarter of the visits, from the samples nearest the boundaries.
    public static func cpuPerQuarter(_ samples: [AgentObservation],
                                     cpu: KeyPath<AgentObservation, Int> = \.process.cpuMillis) -> [Double] {
        guard let last = samples.last, last.sessions >= 8, samples.count >= 8 else { return [] }
        func nearest(_ sessions: Int) -> AgentObservation {
            samples.min { abs($0.sessions - sessions) < abs($1.sessions - sessions) }!
        }
        let bounds = [0, 1, 2, 3, 4].map { nearest(last.sessions * $0 / 4) }
        return (0..<4).map { quarter in
            let a = bounds[quarter], b = bounds[quarter + 1]
            return b.sessions > a.sessions ? Double(b[keyPath: cpu] - a[keyPath: cpu]) / Double(b.sessions - a.sessions) : 0
        }
    }

    /// One line of the soak's progress.
    static func line(_ observation: AgentObservation, _ delivered: BrokerEventCounter.Snapshot, _ tally: LoadTally) -> String {
        "soak: t=\(Int(observation.elapsed))s sessions=\(observation.sessions) ok=\(tally.ok) "
            + "rss=\(observation.process.residentBytes / 1024)KiB fds=\(observation.process.openDescriptors) "
            + "threads=\(observation.process.threads) cpu=\(observation.process.cpuMillis)ms "
            + "wakeups=\(observation.process.voluntarySwitches) "
            + "db=\(observation.databaseBytes / 1024)KiB outbox=\(observation.outboxDepth) delivered=\(delivered.distinctSequences)"
    }
}

public struct LongRunFailure: Error, CustomStringConvertible {
    public let description: String
}

func format1(_ value: Double) -> String {
    let scaled = (value * 10).rounded() / 10
    return "\(scaled)"
}

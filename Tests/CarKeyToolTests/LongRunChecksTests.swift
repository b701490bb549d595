// The long run's verdicts must be able to fail: fabricated runs with one defect each (memory
// creeping, CPU per session growing, a descriptor leaked, an event lost, a crash, a refused
// owner) are each caught, and a flat run passes. Seconds, no agent.
import XCTest
import TestHarness
#if canImport(Glibc)
import Glibc
#endif

final class LongRunChecksTests: XCTestCase {
    private let plan = LongRunPlan(agentPath: "/nonexistent")

    /// A run of 40 samples, 100 visits apart; `rss` and `cpuPerVisit` by sample index.
    private func run(rss: (Int) -> Int = { _ in 30 << 20 }, cpuPerVisit: (Int) -> Double = { _ in 2.0 },
                     phonesCPUPerVisit: (Int) -> Double = { _ in 4.0 },
                     fdsAfter: Int = 20, delivered: Int = 300, exit: Int32? = 0,
                     tally: [LoadOutcome: Int] = [.ok: 4000, .refused("busy"): 12]) throws -> LongRunReport {
        let base = try XCTUnwrap(ProcessStats.sample())
        var cpu = 0.0, phonesCPU = 0.0
        let samples = (0..<40).map { index -> AgentObservation in
            var process = base
            process.residentBytes = rss(index)
            cpu += cpuPerVisit(index) * 100
            process.cpuMillis = Int(cpu)
            phonesCPU += phonesCPUPerVisit(index) * 100
            process.openDescriptors = 20
            return AgentObservation(elapsed: Double(index), sessions: (index + 1) * 100, process: process, databaseBytes: 0, outboxDepth: 0,
                                    phonesCPUMillis: Int(phonesCPU))
        }
        var rest = base
        rest.openDescriptors = 20
        var after = rest
        after.openDescriptors = fdsAfter
        var snapshot = BrokerEventCounter.Snapshot()
        snapshot.distinctSequences = delivered
        snapshot.highestSequence = delivered
        var report = LongRunReport(tally: LoadTally(counts: tally), duration: 40, samples: samples, restBefore: rest, restAfter: after,
                                   exitStatus: exit, eventsWritten: 300, delivered: snapshot, finalOutboxDepth: 300 - delivered,
                                   cpuPerSessionByQuarter: LongRun.cpuPerQuarter(samples),
                                   phonesCPUPerSessionByQuarter: LongRun.cpuPerQuarter(samples, cpu: \.phonesCPUMillis))
        LongRunChecks.apply(plan, to: &report, stderrTail: "")
        return report
    }

    func testAFlatRunPasses() throws {
        XCTAssertEqual(try run().failures, [])
    }

    func testMemoryCreepingAfterWarmUpFails() throws {
        // 60 KiB per sample: 1.3 MiB between the medians of the second quarter and the last tenth.
        let failures = try run(rss: { (30 << 20) + $0 * 60 * 1024 }).failures
        XCTAssertEqual(failures.count, 1, "\(failures)")
        XCTAssertTrue(failures.first?.hasPrefix("RSS grew") ?? false, "\(failures)")
    }

    func testGrowthDuringWarmUpOnlyPasses() throws {
        XCTAssertEqual(try run(rss: { $0 < 8 ? (20 << 20) + $0 * (1 << 20) : 30 << 20 }).failures, [])
    }

    func testCPUPerSessionGrowingWithUptimeFails() throws {
        // Linear growth: the last quarter costs about 1.7 times the second.
        let failures = try run(cpuPerVisit: { 1.0 + Double($0) * 0.05 }).failures
        XCTAssertEqual(failures.count, 1, "\(failures)")
        XCTAssertTrue(failures.first?.hasPrefix("CPU per session grew") ?? false, "\(failures)")
    }

    func testCPUGrowthThePhonesShareIsTheMachineAndPasses() throws {
        // Other builds start halfway: agent and phones both cost 1.8 times as much per visit.
        let slower: (Int) -> Double = { $0 < 20 ? 1 : 1.8 }
        XCTAssertEqual(try run(cpuPerVisit: { 2.0 * slower($0) }, phonesCPUPerVisit: { 4.0 * slower($0) }).failures, [])
        // The same growth in the agent alone is caught.
        XCTAssertTrue(try run(cpuPerVisit: { 2.0 * slower($0) }).failures.contains { $0.hasPrefix("CPU per session grew") })
    }

    func testLeakedDescriptorLostEventCrashAndRefusedOwnerEachFail() throws {
        XCTAssertTrue(try run(fdsAfter: 21).failures.contains { $0.hasPrefix("open descriptors at rest grew") })
        XCTAssertTrue(try run(delivered: 299).failures.contains { $0.contains("299 distinct delivered") })
        XCTAssertTrue(try run(exit: 139).failures.contains { $0.hasPrefix("exit status on SIGTERM was 139") })
        XCTAssertTrue(try run(tally: [.ok: 4000, .fault("rateLimited"): 1]).failures.contains { $0.contains("fault.rateLimited=1") })
        XCTAssertTrue(try run(tally: [.ok: 4000, .link("timedOut"): 1]).failures.contains { $0.contains("link.timedOut=1") })
    }
}

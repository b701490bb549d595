// The agent must run for months: a bounded long run in `make test` (the debug agent this test
// build built, with --mqtt to a real broker, owners enrolled by pairing, phones in process) and
// the same run for an hour in `make soak-long`. LongRun (Tests/Harness) does the work and the
// checks; this file picks the size and fails the test on any failed check.
//
//   CARKEY_LONGRUN_SESSIONS   visits in the bounded run (default 20000, about 2-3 minutes here)
//   CARKEY_LONGRUN_SECONDS    run for this long instead (make soak-long: SOAK_LONG_SECONDS)
//   CARKEY_LONGRUN_PHONES     concurrent phones (default 6, under the agent's 8 links)
//   CARKEY_LONGRUN_AGENT      the carkey-agent to run (default: the debug one this build made;
//                             make soak-long SOAK_LONG_AGENT=... runs the release or static one)
import XCTest
import TestHarness
#if canImport(Glibc)
import Glibc
#endif

final class LongRunTests: XCTestCase {
    func testAgentUnderSustainedLoadStaysFlatAndDeliversEveryEvent() throws {
        var plan = LongRunPlan(agentPath: Self.environment("CARKEY_LONGRUN_AGENT") ?? Subprocess.productsDirectory + "/carkey-agent")
        if let seconds = Self.environment("CARKEY_LONGRUN_SECONDS").flatMap(Double.init) {
            plan.seconds = seconds
            plan.sampleEverySeconds = 5
            plan.printEverySeconds = 60
            // An hour of per-visit log lines would be hundreds of megabytes in /tmp.
            plan.agentArguments = ["--log-level", "warn"]
        } else {
            plan.sessions = Self.environment("CARKEY_LONGRUN_SESSIONS").flatMap(Int.init) ?? 20_000
            // A ceiling for a machine much slower or busier than this one: the checks still
            // judge whatever was done by then (quarters are by sessions, not time).
            plan.seconds = 420
        }
        plan.phones = Self.environment("CARKEY_LONGRUN_PHONES").flatMap(Int.init) ?? 6
        // An instrumented agent (make test-asan) grew 1.6 MB here where the plain one stays
        // flat: the quarantine and allocator caches. make test keeps the 1 MB bound.
        plan.rssGrowthLimitBytes += SanitizerAllowance.rssSlackBytes

        let report = try LongRun.run(plan)
        print(report.summary)
        XCTAssertEqual(report.failures, [], report.summary)
        // The test must be able to fail: a run that did nothing proves nothing.
        XCTAssertGreaterThan(report.tally.ok, min(plan.sessions, 1000) / 2)
        // Routine records (sessions, status reads) are folded per key into summary rows; every
        // actuation (one visit in 50 here) leaves its accepted and completed rows.
        let actuations = report.tally.ok / 50
        XCTAssertGreaterThanOrEqual(report.eventsWritten, Int64(actuations * 2 * 9 / 10), "each actuation leaves its two rows")
    }

    private static func environment(_ name: String) -> String? {
        getenv(name).map { String(cString: $0) }
    }
}

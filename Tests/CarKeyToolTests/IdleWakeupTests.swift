// The idle cost of the real agent binary: a board on a car battery must sleep. Counts the
// agent's wake-ups (voluntary context switches summed over its threads, from /proc) while it
// sits idle after start-up, with and without the cloud link to a real broker. A count of
// wake-ups, not a time, so it does not depend on how busy the machine is.
import XCTest
import TestHarness
#if canImport(Glibc)
import Glibc
#endif

final class IdleWakeupTests: XCTestCase {
    /// Issue 9's target for an idle agent with the cloud link on.
    static let maxWakeupsPerSecond = 20.0
    static let settleSeconds: UInt32 = 2
    static let measureSeconds: UInt32 = 5

    func testAnIdleAgentWithoutTheCloudLinkSleeps() throws {
        let car = AgentHarness()
        let agent = try car.start()
        let rate = try idleWakeups(agent.pid)
        print("idle wake-ups without --mqtt: \(formatted(rate))/s")
        XCTAssertLessThan(rate, Self.maxWakeupsPerSecond, "idle agent without the cloud link")
        XCTAssertEqual(car.stop(), 0)
    }

    func testAnIdleAgentWithTheCloudLinkSleeps() throws {
        let broker = try MosquittoBroker()
        try broker.start()
        let car = AgentHarness()
        let agent = try car.start(["--mqtt", broker.url])
        XCTAssertTrue(agent.wait(timeoutSeconds: 20) { agent.stderr.contains("cloud: connected") }, agent.stderr)
        let rate = try idleWakeups(agent.pid)
        print("idle wake-ups with --mqtt: \(formatted(rate))/s")
        XCTAssertLessThan(rate, Self.maxWakeupsPerSecond, "idle agent with the cloud link")
        XCTAssertTrue(agent.stderr.contains("cloud: connected"))
        XCTAssertFalse(agent.stderr.contains("cloud: connection lost"), "the link must stay up while idle: \(agent.stderr)")
        XCTAssertEqual(car.stop(), 0)
    }

    /// Wake-ups per second over `measureSeconds`, after `settleSeconds` for start-up work to end.
    private func idleWakeups(_ pid: pid_t) throws -> Double {
        sleep(Self.settleSeconds)
        let before = try XCTUnwrap(ProcessStats.sample(pid), "agent gone")
        sleep(Self.measureSeconds)
        let after = try XCTUnwrap(ProcessStats.sample(pid), "agent gone")
        return Double(after.voluntarySwitches - before.voluntarySwitches) / Double(Self.measureSeconds)
    }

    /// One decimal, without Foundation's formatters.
    private func formatted(_ value: Double) -> String {
        let tenths = Int((value * 10).rounded())
        return "\(tenths / 10).\(tenths % 10)"
    }
}

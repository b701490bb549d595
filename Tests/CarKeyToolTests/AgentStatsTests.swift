// `carkey-agent stats` end to end: a running agent answers on its control socket with counters
// that move with what it did (a phone session's events and their syncs), the JSON form, no
// agent, and the benchmark hook that slows every sync.
import XCTest
import Drivers
import TestHarness
#if canImport(Glibc)
import Glibc
#endif

final class AgentStatsTests: XCTestCase {
    private func stats(_ car: AgentHarness) throws -> [String: Int64?] {
        let result = try car.agentTool(["stats", "--state-dir", car.stateDir])
        XCTAssertEqual(result.status, 0, result.stdout + result.stderr)
        var fields: [String: Int64?] = [:]
        for line in result.stdout.split(separator: "\n") {
            let words = line.split(separator: " ")
            XCTAssertEqual(words.count, 2, String(line))
            fields[String(words[0])] = words[1] == "none" ? .some(nil) : Int64(words[1])
        }
        return fields
    }

    func testCountersFollowAPhoneSession() throws {
        let car = AgentHarness()
        try car.start()
        let owner = try car.enrollOwner()
        let before = try stats(car)
        let lastBefore = try XCTUnwrap(try car.events().last?.seq)
        XCTAssertEqual(Set(before.keys), ["uptime-ms", "syncs", "wal-syncs", "sync-time-us", "bytes-written", "events-appended",
                                          "outbox-depth", "commits", "events-committed", "sync-delay-us", "cloud-connected",
                                          "console-dropped-lines", "cloud-inbound-shed"])
        XCTAssertGreaterThan(try XCTUnwrap(before["syncs"] ?? nil), 0, "enrolment wrote to the store")
        XCTAssertEqual(before["sync-delay-us"], 0)
        XCTAssertEqual(before["outbox-depth"], 0, "no cloud link: nothing is routed to the outbox")
        let commitsBefore = try XCTUnwrap(before["commits"] ?? nil, "the loop's group commit provides commits")
        let rowsBefore = try XCTUnwrap(before["events-committed"] ?? nil)
        XCTAssertEqual(before["cloud-connected"], .some(nil), "no --mqtt")

        XCTAssertEqual(try car.phone("unlock", key: owner.path).firstLine, "ok")
        try car.waitForEvent { $0.seq > lastBefore && $0.event.action == "session" && $0.event.result == "closed" }
        let lastAfter = try XCTUnwrap(try car.events().last?.seq)
        let after = try stats(car)

        let appended = try XCTUnwrap(after["events-appended"] ?? nil) - XCTUnwrap(before["events-appended"] ?? nil)
        XCTAssertEqual(appended, lastAfter - lastBefore, "events-appended moves with the event log")
        let syncs = try XCTUnwrap(after["syncs"] ?? nil) - XCTUnwrap(before["syncs"] ?? nil)
        let walSyncs = try XCTUnwrap(after["wal-syncs"] ?? nil) - XCTUnwrap(before["wal-syncs"] ?? nil)
        XCTAssertGreaterThan(walSyncs, 0, "the session's events were committed")
        XCTAssertGreaterThanOrEqual(syncs, walSyncs)
        XCTAssertGreaterThan(try XCTUnwrap(after["bytes-written"] ?? nil), try XCTUnwrap(before["bytes-written"] ?? nil))
        XCTAssertGreaterThan(try XCTUnwrap(after["uptime-ms"] ?? nil), try XCTUnwrap(before["uptime-ms"] ?? nil))
        // The session's audit rows (established, accepted, completed, closed) went through the
        // loop's group commit: at least one commit, never more commits than rows.
        let commits = try XCTUnwrap(after["commits"] ?? nil) - commitsBefore
        let rows = try XCTUnwrap(after["events-committed"] ?? nil) - rowsBefore
        XCTAssertGreaterThanOrEqual(rows, 4, "the session's four audit rows")
        XCTAssertLessThanOrEqual(rows, appended)
        XCTAssertGreaterThan(commits, 0)
        XCTAssertLessThanOrEqual(commits, rows)
    }

    func testJSONAndNoAgent() throws {
        let car = AgentHarness()
        try car.start()
        let json = try car.agentTool(["stats", "--state-dir", car.stateDir, "--json"])
        XCTAssertEqual(json.status, 0, json.stderr)
        XCTAssertTrue(json.stdout.hasPrefix("{\"uptimeMs\":"), json.stdout)
        XCTAssertTrue(json.stdout.contains("\"eventsAppended\":"), json.stdout)
        XCTAssertTrue(json.stdout.contains("\"commits\":") && !json.stdout.contains("\"commits\":null"), json.stdout)
        car.stop()
        let none = try car.agentTool(["stats", "--state-dir", car.stateDir])
        XCTAssertEqual(none.status, 1)
        XCTAssertTrue(none.stderr.contains("no agent is running"), none.stderr)
    }

    func testCloudConnectedFollowsTheLink() throws {
        let broker = try MosquittoBroker()
        try broker.start()
        defer { broker.stop() }
        let car = AgentHarness()
        try car.start(["--mqtt", broker.url])
        var connected: Int64?? = nil
        for _ in 0..<250 {
            connected = try stats(car)["cloud-connected"]
            if connected == 1 { break }
            usleep(20_000)
        }
        XCTAssertEqual(connected, 1, "the link came up")
        XCTAssertEqual(try stats(car)["cloud-inbound-shed"], 0, "with a cloud link the mailbox's count is shown")
        broker.stop()
        for _ in 0..<250 {
            connected = try stats(car)["cloud-connected"]
            if connected == 0 { break }
            usleep(20_000)
        }
        XCTAssertEqual(connected, 0, "the broker went away")
    }

    func testTheSyncDelayHookIsLoggedAndApplied() throws {
        let car = AgentHarness()
        setenv(StorageSyncs.delayEnvironmentVariable, "3000", 1)
        defer { unsetenv(StorageSyncs.delayEnvironmentVariable) }
        let agent = try car.start()
        XCTAssertTrue(agent.stderr.contains("benchmark hook CARKEY_BENCH_SYNC_DELAY_US=3000"), agent.stderr)
        _ = try car.enrollOwner()
        let fields = try stats(car)
        XCTAssertEqual(fields["sync-delay-us"], 3000)
        let syncs = try XCTUnwrap(fields["syncs"] ?? nil), micros = try XCTUnwrap(fields["sync-time-us"] ?? nil)
        XCTAssertGreaterThan(syncs, 0)
        XCTAssertGreaterThanOrEqual(micros, syncs * 3000, "every sync slept the delay (a sleep never ends early)")
    }

    func testABadSyncDelayRefusesToStart() throws {
        let car = AgentHarness()
        setenv(StorageSyncs.delayEnvironmentVariable, "5ms", 1)
        defer { unsetenv(StorageSyncs.delayEnvironmentVariable) }
        let agent = try BackgroundProcess("carkey-agent", ["run", "--simulate", "--state-dir", car.stateDir, "--clock-sync", "no"])
        XCTAssertTrue(agent.wait(timeoutSeconds: 20) { !agent.isRunning })
        XCTAssertTrue(agent.stderr.contains("CARKEY_BENCH_SYNC_DELAY_US must be a whole number"), agent.stderr)
    }
}

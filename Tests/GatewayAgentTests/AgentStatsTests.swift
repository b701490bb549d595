// The `stats` command's parts in process: the agent's fields (events appended since start,
// commit counters once provided) and the tool's bounded parser of the answer.
import XCTest
import Drivers
@testable import carkey_agent

final class AgentStatsFieldsTests: XCTestCase {
    private var folder = ""

    override func setUp() { folder = AgentTestSupport.temporaryDirectory() }
    override func tearDown() { AgentTestSupport.removeTree(folder) }

    private final class Counters: AgentCommitCounters {
        var commits: UInt64 = 7
        var eventsCommitted: UInt64 = 21
    }

    func testFieldsCountFromStartAndShowProvidedCommitCounters() throws {
        let store = try CarStore.open(stateDirectory: folder + "/state")
        let event = NewEvent(kind: .storage, time: EventTime(seconds: 1_700_000_000, trusted: false), action: EventAction(unlisted: "test"), result: "ok")
        _ = try store.appendEvent(event)  // before start: not counted
        let stats = try AgentStats(store: store)
        var fields = Dictionary(uniqueKeysWithValues: stats.fields().map { ($0.name, $0.value) })
        XCTAssertEqual(fields["events-appended"], 0)
        XCTAssertEqual(fields["commits"], .some(nil))
        XCTAssertEqual(fields["cloud-connected"], .some(nil))

        for _ in 0..<3 { _ = try store.appendEvent(event) }
        stats.commitCounters = Counters()
        fields = Dictionary(uniqueKeysWithValues: stats.fields().map { ($0.name, $0.value) })
        XCTAssertEqual(fields["events-appended"], 3)
        XCTAssertEqual(fields["commits"], 7)
        XCTAssertEqual(fields["events-committed"], 21)
        XCTAssertEqual(stats.lines.first { $0.hasPrefix("commits ") }, "commits 7")
        XCTAssertEqual(stats.lines.first { $0.hasPrefix("cloud-connected ") }, "cloud-connected none")
    }

    private final class Drops: AgentDropCounter {
        var droppedSinceStart = 0
    }

    /// The console's dropped output lines and the cloud mailbox's shed messages are in `stats`
    /// ("none" without a console or a cloud link).
    func testDropCountersAreReported() throws {
        let stats = try AgentStats(store: try CarStore.open(stateDirectory: folder + "/state"))
        var fields = Dictionary(uniqueKeysWithValues: stats.fields().map { ($0.name, $0.value) })
        XCTAssertEqual(fields["console-dropped-lines"], .some(nil))
        XCTAssertEqual(fields["cloud-inbound-shed"], .some(nil))
        let console = Drops(), cloud = Drops()
        stats.consoleOutput = console
        stats.cloudInbound = cloud
        console.droppedSinceStart = 12
        cloud.droppedSinceStart = 340
        fields = Dictionary(uniqueKeysWithValues: stats.fields().map { ($0.name, $0.value) })
        XCTAssertEqual(fields["console-dropped-lines"], 12)
        XCTAssertEqual(fields["cloud-inbound-shed"], 340)
        XCTAssertTrue(stats.lines.contains("cloud-inbound-shed 340"))
    }

    func testTheToolParsesOnlyNameValueLines() {
        let parsed = StatsLines.parse(["syncs 12", "commits none", "sync-delay-us 0"])
        XCTAssertEqual(parsed?.map(\.name), ["syncs", "commits", "sync-delay-us"])
        XCTAssertEqual(parsed?.map(\.value), [12, nil, 0])
        for bad in ["syncs", "syncs 1 2", "Syncs 1", "syncs 1.5", "syncs ", " syncs 1", "sy\u{1b}nc 1",
                    String(repeating: "a", count: 41) + " 1", "syncs 99999999999999999999"] {
            XCTAssertNil(StatsLines.parse([bad]), bad)
        }
        XCTAssertEqual(StatsLines.camelCase("events-appended"), "eventsAppended")
        XCTAssertEqual(StatsLines.camelCase("syncs"), "syncs")
    }
}

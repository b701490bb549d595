// The agent's log says what changed, not that phones came and went: at the default level a
// session that only reads the status adds no line, a session that moves a lock adds one, and a
// standing condition (an owner vouching for a time too far from the mark) is logged when it
// starts, not on every session.
import XCTest
import Drivers
#if canImport(Glibc)
import Glibc
#endif

final class LogNoiseTests: XCTestCase {
    private func lines(_ text: String) -> [Substring] { text.split(separator: "\n") }

    func testManySessionsLogTheTrustedTimeConditionOnceAndNoSessionChatter() throws {
        let car = AgentHarness()
        let agent = try car.start()
        let owner = try car.enrollOwner()
        let before = lines(agent.stderr).count

        let sessions = 8
        for _ in 0..<sessions {
            XCTAssertEqual(try car.phone("status", key: owner.path).firstLine, "ok")
        }
        // The agent handles each phone's disconnect after the phone has exited.
        let closed = { try car.events().filter { $0.event.action == "session" && $0.event.result == "closed" }.count }
        for _ in 0..<250 where try closed() < sessions { usleep(20_000) }
        XCTAssertEqual(try closed(), sessions)
        XCTAssertEqual(try car.phone("unlock", key: owner.path).firstLine, "ok")
        XCTAssertEqual(car.stop(), 0)

        let log = lines(agent.stderr)
        let vouching = log.filter { $0.contains("vouches for a time too far from the mark") }
        XCTAssertEqual(vouching.count, 1, "once when the condition starts, not per session:\n\(agent.stderr)")
        let added = log.dropFirst(before).filter { !$0.contains("stopping on signal") && !$0.contains("audit log: ") && !$0.contains("vouches for a time") }
        XCTAssertEqual(added.filter { $0.contains(" unlock: ") }.count, 1, "the unlock that moved the lock: \(added)")
        XCTAssertEqual(added.count, 1, "\(sessions) status sessions add nothing, the unlock one line:\n\(added.joined(separator: "\n"))")
    }
}

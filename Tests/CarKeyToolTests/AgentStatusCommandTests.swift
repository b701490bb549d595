// `carkey-agent status --state-dir DIR [--json] [--wait SECONDS]`: the running agent's status
// over its control socket; exit 3 with a clear message when none runs.
import XCTest
import FoundationEssentials
import Drivers

final class AgentStatusCommandTests: XCTestCase {
    func testNoAgentExitsThreeWithAClearMessage() throws {
        let folder = Subprocess.makeTemporaryDirectory()
        defer { Subprocess.removeTree(folder) }
        for arguments in [["status", "--state-dir", folder], ["status", "--state-dir", folder, "--wait", "1", "--json"]] {
            let result = try Subprocess.run("carkey-agent", arguments)
            XCTAssertEqual(result.status, 3, "\(arguments): \(result.stderr)")
            XCTAssertEqual(result.stdout, "")
            XCTAssertTrue(result.stderr.contains("no agent is running for this state directory (nothing listens on \(folder)/control.sock)")
                          && result.stderr.contains("start one with carkey-agent run --state-dir \(folder)"), result.stderr)
            XCTAssertEqual(result.stderr.filter { $0 == "\n" }.count, 1, "one line: \(result.stderr)")
        }
        let bad = try Subprocess.run("carkey-agent", ["status", "--state-dir", folder, "--wait", "0"])
        XCTAssertEqual(bad.status, 2, bad.stderr)
        XCTAssertTrue(bad.stderr.contains("'--wait'"), bad.stderr)
        let help = try Subprocess.run("carkey-agent", ["status", "--help"])
        XCTAssertTrue(help.stdout.contains("  3  no agent runs for DIR"), help.stdout)
    }

    func testTheRunningAgentsStatusAsTextAndJSON() throws {
        let car = AgentHarness()
        try car.start(clockSync: "yes", ["--console", "none"])
        let owner = try car.enrollOwner()
        XCTAssertEqual(try car.phone("unlock", key: owner.path).firstLine, "ok")

        let text = try car.agentTool(["status", "--state-dir", car.stateDir])
        XCTAssertEqual(text.status, 0, text.stderr)
        XCTAssertEqual(text.stdout.split(separator: "\n").map(String.init), [
            "vehicle: OCK-SIM-0001",
            "state: unlocked, trunk locked",
            text.stdout.split(separator: "\n").map(String.init).first { $0.hasPrefix("clock: trusted (trusted-time mark 20") } ?? "clock: ?",
            "keys: 1 active (1 owner, 0 shared), 0 revoked, 31 of 32 slots free",
            "pairing window: closed",
            "sessions: 0",
        ], text.stdout)

        struct Status: Decodable {
            struct State: Decodable { let summary: String; let bits: Int; let locked: Bool; let trunkLocked: Bool }
            struct Clock: Decodable { let trusted: Bool; let trustedMark: String? }
            struct Keys: Decodable { let active: Int; let owners: Int; let shared: Int; let revoked: Int; let free: Int; let slots: Int }
            struct Pairing: Decodable { let open: Bool; let expiresInSeconds: Int? }
            let vehicle: String; let vehicleState: State; let clock: Clock; let keys: Keys; let pairing: Pairing; let sessions: Int
        }
        XCTAssertEqual(try car.pair().count, 6)
        let json = try car.agentTool(["status", "--state-dir", car.stateDir, "--json"])
        XCTAssertEqual(json.status, 0, json.stderr)
        let status = try JSONDecoder().decode(Status.self, from: Data(json.stdout.utf8))
        XCTAssertEqual(status.vehicle, "OCK-SIM-0001")
        XCTAssertEqual(status.vehicleState.summary, "unlocked, trunk locked")
        XCTAssertFalse(status.vehicleState.locked)
        XCTAssertTrue(status.vehicleState.trunkLocked)
        XCTAssertTrue(status.clock.trusted)
        XCTAssertNotNil(status.clock.trustedMark)
        XCTAssertEqual([status.keys.active, status.keys.owners, status.keys.free, status.keys.slots], [1, 1, 31, 32])
        XCTAssertTrue(status.pairing.open)
        XCTAssertNotNil(status.pairing.expiresInSeconds)
        XCTAssertEqual(car.stop(), 0)
    }
}

// `carkey-agent sim`: the console's sim command through the control socket, for scripts.
import XCTest

final class SimulatedWorldCLITests: XCTestCase {
    func testSimMovesTheSimulatedWorldAndRefusesWhatIsNotThere() throws {
        let car = AgentHarness()
        try car.start()
        let open = try car.agentTool(["sim", "--state-dir", car.stateDir, "door", "open"])
        XCTAssertEqual(open.status, 0, open.stderr)
        XCTAssertEqual(open.stdout, "sim: door open\n")
        let seen = car.agent?.wait(timeoutSeconds: 5) { ((car.agent?.stdout ?? "") + (car.agent?.stderr ?? "")).contains("inputs: doorOpen active") } ?? false
        XCTAssertTrue(seen, "the agent saw the door through its input sampling")

        let bad = try car.agentTool(["sim", "--state-dir", car.stateDir, "door", "ajar"])
        XCTAssertEqual(bad.status, 1)
        XCTAssertTrue(bad.stderr.contains("usage: sim door|trunk open|closed"), bad.stderr)

        let none = try car.agentTool(["sim", "--state-dir", car.stateDir])
        XCTAssertEqual(none.status, 2, "no words is a usage error")
    }

    func testSimWithoutARunningAgentSaysSo() throws {
        let folder = Subprocess.makeTemporaryDirectory()
        defer { Subprocess.removeTree(folder) }
        let result = try Subprocess.run("carkey-agent", ["sim", "--state-dir", folder, "door", "open"])
        XCTAssertEqual(result.status, 1)
        XCTAssertTrue(result.stderr.contains("no agent is running"), result.stderr)
    }
}

// Where the agent writes: every log line, the start-up report included, on stderr (as `run
// --help` says), so `2>agent.log` keeps all of it and stdout is left to the console
// (`--console stdio`) alone.
import XCTest

final class AgentOutputStreamsTests: XCTestCase {
    func testTheStartUpReportAndTheLogGoToStderrAndStdoutStaysEmpty() throws {
        let car = AgentHarness()
        let agent = try car.start(clockSync: "yes", ["--console", "none"])
        let owner = try car.enrollOwner()
        XCTAssertEqual(try car.phone("unlock", key: owner.path).firstLine, "ok")
        XCTAssertEqual(car.stop(), 0)
        for line in ["carkey-agent: crypto self-test passed", "carkey-agent: clock trusted", "carkey-agent: keychain ",
                     "carkey-agent: simulated car OCK-SIM-0001 listening on", "carkey-agent: control socket ",
                     "carkey-agent: stopping on signal"] {
            XCTAssertTrue(agent.stderr.contains(line), "\(line) on stderr: \(agent.stderr)")
        }
        XCTAssertEqual(agent.stdout, "", "nothing but a stdio console writes to stdout")
    }

    func testRunHelpSaysTheLogIsOnStderr() throws {
        let help = try Subprocess.run("carkey-agent", ["run", "--help"])
        XCTAssertEqual(help.status, 0)
        XCTAssertTrue(help.stdout.contains("start-up report included"), help.stdout)
    }
}

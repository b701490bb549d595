// The README's "simulated car by hand" and its UWB follow-up, run as a reader would (bash, from a
// folder with .build/debug): the car trusts its clock (--clock-sync yes), logs to a file, answers
// `carkey-agent status`, and the phone lines print what their comments say.
import XCTest

final class ReadmeQuickStartTests: XCTestCase {
    func testTheSimulatedCarBlocksRunAsWritten() throws {
        let readme = try Subprocess.read(Subprocess.repositoryRoot + "/README.md")
        let car = try ReadmeBlocks.block(after: "A simulated car by hand.", in: readme)
        let uwb = try ReadmeBlocks.block(after: "With UWB (simulated):", in: readme)
        XCTAssertTrue(car.contains("--clock-sync yes") && car.contains("2>$DIR/agent.log"), car)

        let folder = Subprocess.makeTemporaryDirectory()
        defer { Subprocess.removeTree(folder) }
        let script = """
            cd \(folder) && mkdir -p .build && ln -s \(Subprocess.productsDirectory) .build/debug
            trap '[ -n "$AGENT" ] && kill $AGENT 2>/dev/null; wait' EXIT
            \(car)
            echo "== uwb"
            \(uwb)
            echo "== log"
            cat $DIR/agent.log
            """
        let result = try Subprocess.run("/bin/bash", ["-c", script])
        let out = result.stdout
        XCTAssertEqual(result.status, 0, out + result.stderr)
        XCTAssertTrue(out.contains("state: locked, trunk locked\nclock: trusted"), out)
        XCTAssertTrue(out.contains("\nenrolled\n") && out.contains("\nok\ncommand: unlock\n"), out)
        let uwbPart = try XCTUnwrap(out.components(separatedBy: "== uwb\n").last?.components(separatedBy: "== log\n").first)
        let firstLines = uwbPart.split(separator: "\n").filter { $0 == "ok" || $0.hasPrefix("fault: ") }
        XCTAssertEqual(firstLines, ["fault: notInProximity (32)", "ok", "fault: notInProximity (32)"], uwbPart)
        XCTAssertTrue(out.contains("carkey-agent: control socket"), "the log file has the start-up report: \(out)")
        XCTAssertFalse(result.stderr.contains("carkey-agent: "), "nothing of the agent's on the terminal: \(result.stderr)")
    }
}

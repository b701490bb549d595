// Attack: the serial console's peer never reads. Before issue 14 every answer waited up to 1 s
// on the agent's loop for room in the line, so a flood of `help`/`status` typed by something
// that ignores the answers held phone sessions for seconds. Now output goes to a bounded queue
// written without waiting; lines that do not fit are dropped and counted (`status`), and the
// enrolled owner keeps getting in meanwhile.
import XCTest
import Drivers
import Protocol
import TestHarness
#if canImport(Glibc)
import Glibc
#endif

final class AttackConsoleTests: XCTestCase {
    func testAConsolePeerThatNeverReadsDoesNotDelayPhones() throws {
        let harness = AgentHarness()
        defer { harness.stop() }
        let config = harness.folder + "/agent.json"
        try Subprocess.write(#"{"console": {"tty": "pty"}}"#, to: config)
        chmod(config, 0o600)
        let agent = try harness.start(clockSync: "yes", ["--config", config])
        let prefix = "carkey-agent: console on "
        let line = agent.stderr.split(separator: "\n").first { $0.hasPrefix(prefix) }
        let path = String(try XCTUnwrap(line, agent.stderr).dropFirst(prefix.count))
        let owner = try LoadEnrollment.enrollOwner(try P256PrivateKey.generate(), stateDirectory: harness.stateDir)

        // The attacker's end of the cable: types, never reads.
        let cable = try SerialPort.open(path: path)
        defer { cable.close() }
        let probe = OwnerProbe(phone: owner, socketPath: harness.socketPath, intervalMillis: 500, deadlineMillis: 1000)
        probe.start()
        let seconds = 15.0 * Double(AttackReport.scale)
        let flood = Array("help\rstatus\rlinks\r".utf8)
        var typed = 0
        let end = Monotonic.seconds() + seconds
        while Monotonic.seconds() < end {
            // The line back to us is full for good after the first second; the agent must keep
            // reading what we type and answering phones anyway.
            let n = flood.withUnsafeBytes { write(cable.descriptor.rawValue, $0.baseAddress, $0.count) }
            if n == flood.count { typed += 3 } else { usleep(2_000) }
        }
        let result = probe.stop()
        let alive = agent.isRunning

        // Now read the backlog away and ask: the drops were counted and the console still works.
        // (Answers to the typed backlog come first; any `status` among them shows the count.)
        let client = try ConsoleClient(path: path)
        var dropped = "-"
        var status = ""
        for _ in 0..<200 where !dropped.contains(" line(s) dropped") || dropped.contains(", 0 output") {
            status = try client.command("status", timeoutSeconds: 2)
            dropped = status.split(whereSeparator: \.isNewline).last { $0.hasPrefix("console: ") }.map(String.init) ?? dropped
        }
        let episodes = agent.stderr.components(separatedBy: "console: output queue full").count - 1

        AttackReport.emit(AttackResult(attack: "console.never-reading-peer", tries: typed, ownerAttempts: result.attempts,
                                       ownerSuccesses: result.successes, crashes: alive ? 0 : 1,
                                       note: "\(result.summary()); \(dropped); \(episodes) drop episode(s) logged"))
        XCTAssertTrue(alive, "the agent must survive: \(agent.stderrTail)")
        XCTAssertGreaterThanOrEqual(result.successes, 1, result.summary())
        XCTAssertGreaterThanOrEqual(result.successPercent, 80, result.summary())
        XCTAssertGreaterThan(typed, 100, "the flood reached the console")
        XCTAssertTrue(dropped.contains("output line(s) dropped") && !dropped.contains(" 0 output"), "drops are counted in status: \(status)")
        XCTAssertGreaterThanOrEqual(episodes, 1, "the drop episode is logged")
        XCTAssertEqual(try PhoneSessionRunner.visit(owner, socketPath: harness.socketPath, command: .status), .ok)
    }
}

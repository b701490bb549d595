// Under systemd (stderr is the stream $JOURNAL_STREAM names) every log line starts with its
// syslog priority, so journald files it under the right level; anywhere else, no prefix.
import XCTest
import Drivers

final class JournalPriorityTests: XCTestCase {
    /// Runs the agent for 2 s with stderr to a file; `matching`: whether JOURNAL_STREAM names it.
    private func stderrOfARun(matching: Bool) throws -> String {
        let folder = Subprocess.makeTemporaryDirectory()
        defer { Subprocess.removeTree(folder) }
        let agent = Subprocess.productsDirectory + "/carkey-agent"
        let stream = matching ? "$(stat -c %d:%i \(folder)/err)" : "1:1"
        let script = """
            : > \(folder)/err
            export JOURNAL_STREAM=\(stream)
            timeout -s TERM 2 \(agent) run --simulate --state-dir \(folder)/state --console none 2>>\(folder)/err >/dev/null
            true
            """
        let result = try Subprocess.run("/bin/sh", ["-c", script])
        XCTAssertEqual(result.status, 0, result.stderr)
        return String(decoding: try Files.read(folder + "/err", limit: 1 << 20), as: UTF8.self)
    }

    func testLinesCarryTheirPriorityOnlyWhenStderrIsTheJournal() throws {
        let journal = try stderrOfARun(matching: true)
        XCTAssertTrue(journal.contains("<6>carkey-agent: stopping on signal"), journal)
        // What `journalctl -u carkey-agent` shows when the unit's READY=1 went out.
        XCTAssertTrue(journal.contains("<6>carkey-agent: ready: simulated car OCK-SIM-0001 listening on "), journal)
        XCTAssertFalse(journal.split(separator: "\n").contains { !$0.hasPrefix("<") }, "every line has a priority: \(journal)")
        let plain = try stderrOfARun(matching: false)
        XCTAssertTrue(plain.contains("carkey-agent: stopping on signal"), plain)
        XCTAssertFalse(plain.contains("<6>"), plain)
    }
}

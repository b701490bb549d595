// Attack: hostile files where the agent expects a config, a board file, a CA certificate or its
// state directory (issue 14). Each case runs the real `carkey-agent` and expects a prompt exit
// with one line naming the file (and the key) instead of a hang, a truncated value or an error
// from deep inside a library. A hang is bounded: the process is killed after `patienceSeconds`
// and the test fails; no timing is asserted otherwise.
import XCTest
import Drivers
import TestHarness
#if canImport(Glibc)
import Glibc
#endif

final class AttackHostileFilesTests: XCTestCase {
    private var folder = ""
    /// Generous for a loaded machine: a start-up refusal takes well under a second.
    private static let patienceSeconds = 60.0

    override func setUp() { folder = Subprocess.makeTemporaryDirectory() }
    override func tearDown() { Subprocess.removeTree(folder) }

    private struct Outcome {
        let status: Int32?
        let stderr: String
        var firstLine: String { stderr.split(separator: "\n").first.map(String.init) ?? "" }
        var note: String { "exit \(status.map(String.init) ?? "none (killed: hung)"): \(firstLine)" }
    }

    /// Runs `carkey-agent ARGS` and waits for it to exit; a process still running after the
    /// patience is killed and reported as hung (status nil).
    private func agent(_ arguments: [String]) throws -> Outcome {
        let process = try AgentProcess("carkey-agent", arguments)
        let exited = process.wait(timeoutSeconds: Self.patienceSeconds) { !process.isRunning }
        if !exited {
            process.stop(signal: SIGKILL, timeoutSeconds: 5)
            return Outcome(status: nil, stderr: process.stderr)
        }
        return Outcome(status: process.stop(), stderr: process.stderr)
    }

    private func run(_ extra: [String]) throws -> Outcome {
        try agent(["run", "--simulate", "--state-dir", folder + "/state", "--clock-sync", "no"] + extra)
    }

    private func expectRefused(_ outcome: Outcome, saying expected: String, attack: String,
                               file: StaticString = #filePath, line: UInt = #line) {
        // A hang is not a crash: it shows in the note ("killed: hung") and fails the test.
        AttackReport.emit(AttackResult(attack: attack, tries: 1, note: outcome.note))
        XCTAssertNotNil(outcome.status, "hung: \(outcome.stderr)", file: file, line: line)
        XCTAssertNotEqual(outcome.status, 0, outcome.stderr, file: file, line: line)
        XCTAssertTrue(outcome.stderr.contains(expected), "expected \(expected.debugDescription) in: \(outcome.stderr)", file: file, line: line)
        XCTAssertNil(UnixSocket.inode(of: folder + "/state/ble.sock"), "nothing was served", file: file, line: line)
    }

    private func write(_ bytes: [UInt8], to path: String) throws {
        guard let handle = fopen(path, "wb") else { throw POSIXFailure(code: errno, what: "fopen \(path)") }
        defer { fclose(handle) }
        if !bytes.isEmpty { fwrite(bytes, 1, bytes.count, handle) }
    }

    // MARK: Non-regular files

    func testFIFOAsBoardFileIsRefusedAtOnce() throws {
        let fifo = folder + "/board.json"
        XCTAssertEqual(mkfifo(fifo, 0o600), 0)
        let outcome = try run(["--board", fifo])
        expectRefused(outcome, saying: "\(fifo) is a FIFO, not a regular file", attack: "files.fifo-board")
    }

    func testFIFOAsConfigFileIsRefusedAtOnce() throws {
        let fifo = folder + "/agent.json"
        XCTAssertEqual(mkfifo(fifo, 0o600), 0)
        let outcome = try run(["--config", fifo])
        expectRefused(outcome, saying: "\(fifo) is a FIFO, not a regular file", attack: "files.fifo-config")
    }

    func testOversizedBoardFileNamesPathAndLimit() throws {
        let board = folder + "/board.json"
        try write([UInt8](repeating: 0x20, count: 2 << 20), to: board)
        let outcome = try run(["--board", board])
        expectRefused(outcome, saying: "\(board) is larger than the limit of", attack: "files.oversized-board")
    }

    // MARK: JSON strictness

    func testDuplicateKeyInConfigIsRefusedNamingTheKey() throws {
        let config = folder + "/agent.json"
        try write(Array(#"{"console": {"baud": 9600, "baud": 115200}}"#.utf8), to: config)
        let outcome = try run(["--config", config])
        expectRefused(outcome, saying: #"duplicate key "console.baud""#, attack: "files.duplicate-key")
    }

    func testFractionalIntegerIsRefusedNotTruncated() throws {
        let config = folder + "/agent.json"
        try write(Array(#"{"service": {"timeoutSeconds": 300.5}}"#.utf8), to: config)
        let outcome = try run(["--config", config])
        expectRefused(outcome, saying: "key 'service.timeoutSeconds' must be an integer, got 300.5", attack: "files.fractional-config")

        let text = String(decoding: try Files.read(Subprocess.repositoryRoot + "/board/raspberrypi5-uwb.json"), as: UTF8.self)
        let board = folder + "/board.json"
        try write(Array(text.split(separator: #""line": 17,"#, omittingEmptySubsequences: false).joined(separator: #""line": 17.5,"#).utf8), to: board)
        let boardOutcome = try run(["--board", board])
        expectRefused(boardOutcome, saying: "outputs.lock.line: must be an integer, got 17.5", attack: "files.fractional-board")
    }

    func testUTF16ConfigIsNamedAsSuch() throws {
        let config = folder + "/agent.json"
        let text = #"{"vehicleID": "OCK-SIM-0001"}"#
        try write([0xFF, 0xFE] + Array(text.utf16).flatMap { [UInt8($0 & 0xFF), UInt8($0 >> 8)] }, to: config)
        let outcome = try run(["--config", config])
        expectRefused(outcome, saying: "file is UTF-16, expected UTF-8", attack: "files.utf16-config")
    }

    // MARK: State directory and TLS files

    func testSymlinkedStateDirectoryIsNamed() throws {
        let real = folder + "/real-state", link = folder + "/state"
        XCTAssertEqual(mkdir(real, 0o700), 0)
        XCTAssertEqual(symlink(real, link), 0)
        let outcome = try agent(["run", "--simulate", "--state-dir", link, "--clock-sync", "no"])
        expectRefused(outcome, saying: "state directory \(link) is a symlink to \(real): use the real path \(real)",
                      attack: "files.symlinked-state-dir")
        XCTAssertFalse(outcome.stderr.contains("SQLite code 14"), outcome.stderr)
    }

    func testMissingCAFileNamesTheSettingAndPath() throws {
        let ca = folder + "/missing-ca.pem"
        let flag = try run(["--mqtt", "mqtts://127.0.0.1:8883", "--mqtt-ca", ca])
        expectRefused(flag, saying: "--mqtt-ca: cannot read the CA file \(ca): No such file or directory", attack: "files.missing-ca-flag")
        XCTAssertFalse(flag.stderr.contains("Invalid function arguments"), flag.stderr)

        let config = folder + "/agent.json"
        try write(Array(#"{"mqtt": {"url": "mqtts://127.0.0.1:8883", "ca": "missing-ca.pem"}}"#.utf8), to: config)
        let file = try run(["--config", config])
        expectRefused(file, saying: "'mqtt.ca' in the config file: cannot read the CA file \(ca)", attack: "files.missing-ca-config")
    }

    // MARK: Permissions

    /// `carkey-agent keys` as another user on the service user's 0700 store: the error says
    /// permission denied, not "not found", and suggests sudo -u with the directory's owner (root
    /// here; carkey for the shipped unit). Needs root to make the store and drop to nobody.
    func testKeysAsAnotherUserSaysPermissionDenied() throws {
        guard geteuid() == 0 else { throw XCTSkip("needs root to run the tool as another user") }
        guard access("/usr/bin/setpriv", X_OK) == 0 else { throw XCTSkip("setpriv (util-linux) not installed") }
        let harness = AgentHarness(stateDirectory: folder + "/state")
        try harness.start()
        harness.stop()
        // The test folder is traversable, the state directory is the agent's own 0700.
        XCTAssertEqual(chmod(folder, 0o755), 0)
        XCTAssertEqual(try Files.mode(of: folder + "/state"), 0o700)
        let tool = AgentProcess.sibling("carkey-agent")
        let result = try Subprocess.run("/usr/bin/setpriv", ["--reuid=65534", "--regid=65534", "--clear-groups",
                                                             tool, "keys", "--state-dir", folder + "/state"])
        let note = "exit \(result.status): \(result.stderr.split(separator: "\n").first.map(String.init) ?? "")"
        AttackReport.emit(AttackResult(attack: "files.keys-as-other-user", tries: 1, note: note))
        guard !result.stderr.contains("setpriv:") else { throw XCTSkip("setpriv could not switch user: \(result.stderr)") }
        XCTAssertNotEqual(result.status, 0)
        XCTAssertTrue(result.stderr.contains("permission denied"), result.stderr)
        XCTAssertTrue(result.stderr.contains(folder + "/state/carkey.db"), result.stderr)
        XCTAssertTrue(result.stderr.contains("sudo -u root carkey-agent"), "names the store's owner: \(result.stderr)")
        XCTAssertFalse(result.stderr.contains("not found"), result.stderr)
    }
}

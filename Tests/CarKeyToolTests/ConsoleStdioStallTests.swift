// `--console stdio` whose stdout is a pipe nobody reads: the console's answers fill the pipe,
// then its own 64 KiB queue, then are dropped and counted, while phone sessions go on. Before
// the console had its own non-blocking description of stdout, the first write to the full
// pipe blocked the agent's loop for good (the phone and `stats` never got an answer).
import XCTest
import TestHarness
import Drivers
#if canImport(Glibc)
import Glibc
#endif

final class ConsoleStdioStallTests: XCTestCase {
    func testAStdoutNobodyReadsCostsDroppedLinesNotTheLoop() throws {
        let car = AgentHarness()
        var input: [Int32] = [-1, -1], output: [Int32] = [-1, -1]
        XCTAssertEqual(pipe(&input), 0)
        XCTAssertEqual(pipe(&output), 0)
        // Only the agent gets these (dup2 below); the phone and stats subprocesses must not.
        for fd in input + output { _ = fcntl(fd, F_SETFD, FD_CLOEXEC) }
        defer { [input[1], output[0]].forEach { _ = close($0) } }

        var actions = posix_spawn_file_actions_t()
        posix_spawn_file_actions_init(&actions)
        defer { posix_spawn_file_actions_destroy(&actions) }
        posix_spawn_file_actions_adddup2(&actions, input[0], 0)
        posix_spawn_file_actions_adddup2(&actions, output[1], 1)
        posix_spawn_file_actions_addopen(&actions, 2, car.stateDir + ".stderr", O_WRONLY | O_CREAT | O_TRUNC, 0o600)
        let path = Subprocess.productsDirectory + "/carkey-agent"
        let words: [String] = [path, "run", "--simulate", "--state-dir", car.stateDir, "--clock-sync", "no", "--console", "stdio"]
        let argv = words.map { strdup($0) } + [nil]
        defer { argv.forEach { free($0) } }
        var pid: pid_t = 0
        XCTAssertEqual(posix_spawn(&pid, path, &actions, nil, argv, environ), 0)
        close(input[0])
        close(output[1])
        defer {
            kill(pid, SIGKILL)
            var status: Int32 = 0
            while waitpid(pid, &status, 0) < 0 && errno == EINTR {}
        }
        for _ in 0..<1000 where UnixSocket.inode(of: car.controlPath) == nil { usleep(20_000) }
        XCTAssertNotNil(UnixSocket.inode(of: car.controlPath), "agent did not start")
        let owner = try car.enrollOwner()

        // Far more answer text than the pipe (64 KiB) and the console's queue (64 KiB) hold.
        let commands = String(repeating: "help\n", count: 400)
        let written = commands.utf8.withContiguousStorageIfAvailable { write(input[1], $0.baseAddress, $0.count) }
        XCTAssertEqual(written, commands.utf8.count)

        var dropped: Int64 = 0
        for round in 0..<100 {
            let unlock = try car.phone("unlock", key: owner.path)
            let stats = try car.agentTool(["stats", "--state-dir", car.stateDir])
            guard unlock.firstLine == "ok", stats.status == 0 else {
                XCTFail("round \(round): the loop is stuck: \(unlock.stdout) \(unlock.stderr) \(stats.stderr)")
                break
            }
            let line = stats.stdout.split(separator: "\n").first { $0.hasPrefix("console-dropped-lines ") }
            dropped = line.flatMap { Int64($0.split(separator: " ")[1]) } ?? 0
            if dropped > 0 && round >= 2 { break }
            usleep(50_000)
        }
        XCTAssertGreaterThan(dropped, 0, "the console's answers were dropped, counted in stats")
        XCTAssertEqual(kill(pid, 0), 0, "the agent is still running")
    }
}

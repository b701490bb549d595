// A carkey-agent started by a benchmark: posix_spawn with output to files in its folder, the
// `stats` tool run against it, and SIGTERM (then SIGKILL) on stop. Every wait is bounded.
#if canImport(Glibc)
import Glibc
#endif
import Drivers
import TestHarness

final class SpawnedAgent {
    let binary: String
    let stateDirectory: String
    private(set) var pid: pid_t = 0

    struct Failure: Error, CustomStringConvertible { let description: String }

    /// Starts `binary run --simulate --state-dir DIR --clock-sync no` plus `extra`, and waits
    /// (at most 30 s) for its control socket.
    init(binary: String, stateDirectory: String, extra: [String]) throws {
        self.binary = binary
        self.stateDirectory = stateDirectory
        var actions = posix_spawn_file_actions_t()
        posix_spawn_file_actions_init(&actions)
        defer { posix_spawn_file_actions_destroy(&actions) }
        posix_spawn_file_actions_addopen(&actions, 0, "/dev/null", O_RDONLY, 0)
        posix_spawn_file_actions_addopen(&actions, 1, stateDirectory + ".stdout", O_WRONLY | O_CREAT | O_TRUNC, 0o600)
        posix_spawn_file_actions_addopen(&actions, 2, stateDirectory + ".stderr", O_WRONLY | O_CREAT | O_TRUNC, 0o600)
        let arguments = [binary, "run", "--simulate", "--state-dir", stateDirectory, "--clock-sync", "no"] + extra
        let argv = arguments.map { strdup($0) } + [nil]
        defer { argv.forEach { free($0) } }
        let spawned = posix_spawn(&pid, binary, &actions, nil, argv, environ)
        guard spawned == 0 else { throw Failure(description: "posix_spawn \(binary): \(String(cString: strerror(spawned)))") }
        let socket = stateDirectory + "/control.sock"
        // Start-up is a one-off wait outside any measurement; 20 ms steps are fine here.
        for _ in 0..<1500 {
            if UnixSocket.inode(of: socket) != nil { return }
            var status: Int32 = 0
            if waitpid(pid, &status, WNOHANG) == pid {
                pid = 0
                throw Failure(description: "\(binary) exited at start-up: \(tail(stateDirectory + ".stderr"))")
            }
            usleep(20_000)
        }
        stop()
        throw Failure(description: "\(binary) did not open its control socket in 30 s")
    }

    deinit { stop() }

    /// The agent's counters from `carkey-agent stats` (the same binary), name -> value.
    func stats() -> [String: Int64] { AgentStatsTool.read(binary: binary, stateDirectory: stateDirectory) }

    /// "dynamic" when the running process mapped the dynamic loader, "static" otherwise.
    var linkage: String {
        guard let maps = ProcessStats.read("/proc/\(pid)/maps") else { return "unknown" }
        return maps.contains("/ld-linux") ? "dynamic" : "static"
    }

    func stop() {
        guard pid > 0 else { return }
        kill(pid, SIGTERM)
        var status: Int32 = 0
        for _ in 0..<250 {
            if waitpid(pid, &status, WNOHANG) == pid { pid = 0; return }
            usleep(20_000)
        }
        kill(pid, SIGKILL)
        waitpid(pid, &status, 0)
        pid = 0
    }

    private func tail(_ path: String) -> String {
        String((ProcessStats.read(path) ?? "").suffix(400))
    }
}

/// `carkey-agent stats --state-dir DIR` read into name -> value (fields reading "none" are left out).
enum AgentStatsTool {
    static func read(binary: String, stateDirectory: String) -> [String: Int64] {
        guard let pipe = popen("'\(binary)' stats --state-dir '\(stateDirectory)' 2>/dev/null", "r") else { return [:] }
        var fields: [String: Int64] = [:]
        var line = [CChar](repeating: 0, count: 256)
        while fgets(&line, Int32(line.count), pipe) != nil {
            let text = String(decoding: line.prefix { $0 != 0 }.map { UInt8(bitPattern: $0) }, as: UTF8.self)
            let words = text.split(whereSeparator: { $0 == " " || $0 == "\n" })
            if words.count == 2, let value = Int64(words[1]) { fields[String(words[0])] = value }
        }
        pclose(pipe)
        return fields
    }
}

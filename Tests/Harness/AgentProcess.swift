// A carkey-agent (or any built executable) running beside a test or benchmark: spawned with
// posix_spawn, output to files in its own folder (no pipe can fill up and stall it), every
// wait bounded, and always stopped by its owner (SIGTERM, then SIGKILL).
#if canImport(Glibc)
import Glibc
#endif

public final class AgentProcess {
    public let pid: pid_t
    /// Where stdout and stderr go.
    public let folder: String
    private var exitStatus: Int32?

    public struct SpawnFailure: Error, CustomStringConvertible {
        public let path: String
        public let code: Int32
        public var description: String { "posix_spawn \(path): error \(code)" }
    }

    /// `executable`: a path, or a bare product name, which is looked up beside the running
    /// program (`sibling`). stdin is /dev/null.
    public init(_ name: String, _ arguments: [String]) throws {
        let executable = name.contains("/") ? name : Self.sibling(name)
        folder = TestFolders.make(prefix: "opencarkey-agent-out")
        var actions = posix_spawn_file_actions_t()
        posix_spawn_file_actions_init(&actions)
        defer { posix_spawn_file_actions_destroy(&actions) }
        posix_spawn_file_actions_addopen(&actions, 0, "/dev/null", O_RDONLY, 0)
        posix_spawn_file_actions_addopen(&actions, 1, folder + "/stdout", O_WRONLY | O_CREAT | O_TRUNC, 0o600)
        posix_spawn_file_actions_addopen(&actions, 2, folder + "/stderr", O_WRONLY | O_CREAT | O_TRUNC, 0o600)
        let argv = ([executable] + arguments).map { strdup($0) } + [nil]
        defer { argv.forEach { free($0) } }
        var child: pid_t = 0
        let spawned = posix_spawn(&child, executable, &actions, nil, argv, environ)
        guard spawned == 0 else {
            TestFolders.remove(folder)
            throw SpawnFailure(path: executable, code: spawned)
        }
        pid = child
    }

    deinit {
        stop(signal: SIGKILL, timeoutSeconds: 2)
        TestFolders.remove(folder)
    }

    /// The built product `name`: from the folder CARKEY_TEST_BINARIES names when it is set
    /// (`make test` runs the vault tests a second time against the glibc release build that
    /// way; a missing binary there fails the run rather than falling back to the debug one),
    /// else the one beside the running program.
    public static func sibling(_ name: String) -> String {
        if let folder = getenv("CARKEY_TEST_BINARIES").map({ String(cString: $0) }), !folder.isEmpty {
            return folder + "/" + name
        }
        return besideTheRunningProgram(name)
    }

    /// The executable beside the running program (SwiftPM puts products and the test bundle in
    /// one folder, .build/debug or .build/release).
    public static func besideTheRunningProgram(_ name: String) -> String {
        var buffer = [CChar](repeating: 0, count: 4096)
        let n = readlink("/proc/self/exe", &buffer, buffer.count - 1)
        precondition(n > 0, "readlink /proc/self/exe")
        let path = String(decoding: buffer[0..<n].map { UInt8(bitPattern: $0) }, as: UTF8.self)
        return String(path[..<path.lastIndex(of: "/")!]) + "/" + name
    }

    /// Everything written to stdout and stderr so far.
    public var stdout: String { ProcessStats.read(folder + "/stdout") ?? "" }
    public var stderr: String { ProcessStats.read(folder + "/stderr") ?? "" }

    /// The last `limit` bytes of the output files (enough for a failure message).
    public var stdoutTail: String { Self.tail(folder + "/stdout") }
    public var stderrTail: String { Self.tail(folder + "/stderr") }

    /// False once the process has exited (it is reaped here).
    public var isRunning: Bool {
        guard exitStatus == nil else { return false }
        var status: Int32 = 0
        if waitpid(pid, &status, WNOHANG) == pid { exitStatus = Self.decode(status) }
        return exitStatus == nil
    }

    /// Polls `condition` every 20 ms until it holds (true), the process exits or time is up.
    public func wait(timeoutSeconds: Double, until condition: () -> Bool) -> Bool {
        let deadline = Monotonic.seconds() + timeoutSeconds
        while Monotonic.seconds() < deadline {
            if condition() { return true }
            if !isRunning { return condition() }
            usleep(20_000)
        }
        return condition()
    }

    /// Sends `signal`, waits for the exit, escalates to SIGKILL after the timeout. Returns the
    /// exit status (128 + signal when killed by one).
    @discardableResult
    public func stop(signal: Int32 = SIGTERM, timeoutSeconds: Double = 10) -> Int32? {
        guard isRunning else { return exitStatus }
        kill(pid, signal)
        if wait(timeoutSeconds: timeoutSeconds, until: { !isRunning }) { return exitStatus }
        kill(pid, SIGKILL)
        var status: Int32 = 0
        while waitpid(pid, &status, 0) < 0 && errno == EINTR {}
        exitStatus = Self.decode(status)
        return exitStatus
    }

    private static func decode(_ status: Int32) -> Int32 {
        (status & 0x7f) == 0 ? (status >> 8) & 0xff : 128 + (status & 0x7f)
    }

    private static func tail(_ path: String, limit: Int = 4096) -> String {
        guard let file = fopen(path, "rb") else { return "" }
        defer { fclose(file) }
        fseek(file, 0, SEEK_END)
        let size = ftell(file)
        fseek(file, max(0, size - limit), SEEK_SET)
        var bytes = [UInt8](repeating: 0, count: limit)
        let n = fread(&bytes, 1, limit, file)
        return String(decoding: bytes[0..<max(0, n)], as: UTF8.self)
    }
}

/// Monotonic time for harness waits and rates.
public enum Monotonic {
    public static func seconds() -> Double {
        var spec = timespec()
        clock_gettime(CLOCK_MONOTONIC, &spec)
        return Double(spec.tv_sec) + Double(spec.tv_nsec) / 1e9
    }

    /// CPU time of the calling thread (not wall time: stable on a shared machine).
    public static func threadCPUSeconds() -> Double {
        var spec = timespec()
        clock_gettime(CLOCK_THREAD_CPUTIME_ID, &spec)
        return Double(spec.tv_sec) + Double(spec.tv_nsec) / 1e9
    }
}

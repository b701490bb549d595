// A built executable running beside the test (the agent): started with posix_spawn, output to
// files, every wait bounded, and always stopped (SIGTERM, then SIGKILL) by its owner.
import XCTest
#if canImport(Glibc)
import Glibc
#endif

final class BackgroundProcess {
    let pid: pid_t
    private let folder: String
    private var exitStatus: Int32?

    init(_ executable: String, _ arguments: [String]) throws {
        folder = Subprocess.makeTemporaryDirectory()
        var actions = posix_spawn_file_actions_t()
        posix_spawn_file_actions_init(&actions)
        defer { posix_spawn_file_actions_destroy(&actions) }
        posix_spawn_file_actions_addopen(&actions, 0, "/dev/null", O_RDONLY, 0)
        posix_spawn_file_actions_addopen(&actions, 1, folder + "/stdout", O_WRONLY | O_CREAT | O_TRUNC, 0o600)
        posix_spawn_file_actions_addopen(&actions, 2, folder + "/stderr", O_WRONLY | O_CREAT | O_TRUNC, 0o600)
        let path = Subprocess.productsDirectory + "/" + executable
        let argv = ([path] + arguments).map { strdup($0) } + [nil]
        defer { argv.forEach { free($0) } }
        var child: pid_t = 0
        let spawned = posix_spawn(&child, path, &actions, nil, argv, environ)
        guard spawned == 0 else {
            Subprocess.removeTree(folder)
            throw POSIXFailure(code: spawned, what: "posix_spawn \(path)")
        }
        pid = child
    }

    deinit {
        _ = stop(signal: SIGKILL, timeoutSeconds: 2)
        Subprocess.removeTree(folder)
    }

    var stdout: String { (try? Subprocess.read(folder + "/stdout")) ?? "" }
    var stderr: String { (try? Subprocess.read(folder + "/stderr")) ?? "" }

    /// False once the process has exited (it is reaped here).
    var isRunning: Bool {
        guard exitStatus == nil else { return false }
        var status: Int32 = 0
        let result = waitpid(pid, &status, WNOHANG)
        if result == pid { exitStatus = Self.decode(status) }
        return exitStatus == nil
    }

    /// Polls `condition` every 20 ms until it holds (true), the process exits or the time is up.
    func wait(timeoutSeconds: Double, until condition: () -> Bool) -> Bool {
        let deadline = Self.now() + timeoutSeconds
        while Self.now() < deadline {
            if condition() { return true }
            if !isRunning { return condition() }
            usleep(20_000)
        }
        return condition()
    }

    /// Sends `signal` and waits for the exit; escalates to SIGKILL after the timeout. Returns
    /// the exit status (128 + signal when killed by one).
    @discardableResult
    func stop(signal: Int32 = SIGTERM, timeoutSeconds: Double = 5) -> Int32? {
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

    private static func now() -> Double {
        var spec = timespec()
        clock_gettime(CLOCK_MONOTONIC, &spec)
        return Double(spec.tv_sec) + Double(spec.tv_nsec) / 1e9
    }
}

// Process plumbing for the ejabberd harness: spawning ejabberdctl and epmd with output to
// files, bounded waits for exits, and finding a node's Erlang VM (beam.smp) in /proc.
//
// Why /proc: `ejabberdctl foreground` runs bash -> su -> sh -> beam.smp, so the pid we spawn is
// the script, not the VM a test wants to SIGKILL or measure.
#if canImport(Glibc)
import Glibc
#endif

enum EjabberdProcesses {
    struct Failure: Error, CustomStringConvertible {
        let what: String
        var description: String { what }
    }

    /// Starts `path` with `arguments`; stdin is /dev/null, stdout and stderr are appended to `output`.
    static func spawn(_ path: String, _ arguments: [String], argv0: String? = nil, output: String) throws -> pid_t {
        var actions = posix_spawn_file_actions_t()
        posix_spawn_file_actions_init(&actions)
        defer { posix_spawn_file_actions_destroy(&actions) }
        posix_spawn_file_actions_addopen(&actions, 0, "/dev/null", O_RDONLY, 0)
        posix_spawn_file_actions_addopen(&actions, 1, output, O_WRONLY | O_CREAT | O_APPEND, 0o644)
        posix_spawn_file_actions_adddup2(&actions, 1, 2)
        let argv = ([argv0 ?? path] + arguments).map { strdup($0) } + [nil]
        defer { argv.forEach { free($0) } }
        var child: pid_t = 0
        let rc = posix_spawn(&child, path, &actions, nil, argv, environ)
        guard rc == 0 else { throw Failure(what: "posix_spawn \(path): error \(rc)") }
        return child
    }

    /// Runs a command to its end (at most `timeoutSeconds`, then SIGKILL); returns its status and output.
    static func run(_ path: String, _ arguments: [String], scratch: String, timeoutSeconds: Double = 60) throws -> (status: Int32, output: String) {
        let output = scratch + "/ctl-\(getpid())-\(UInt32.random(in: 0...UInt32.max)).out"
        defer { unlink(output) }
        let child = try spawn(path, arguments, output: output)
        let status = waitExit(child, timeoutSeconds: timeoutSeconds) ?? {
            kill(child, SIGKILL)
            return waitExit(child, timeoutSeconds: 5) ?? -1
        }()
        return (status, ProcessStats.read(output) ?? "")
    }

    /// Reaps our child `pid`; nil when it is still running after the timeout.
    static func waitExit(_ pid: pid_t, timeoutSeconds: Double) -> Int32? {
        let deadline = Monotonic.seconds() + timeoutSeconds
        var status: Int32 = 0
        repeat {
            let reaped = waitpid(pid, &status, WNOHANG)
            if reaped == pid { return (status & 0x7f) == 0 ? (status >> 8) & 0xff : 128 + (status & 0x7f) }
            if reaped < 0 && errno != EINTR { return -1 }  // not our child (or already reaped)
            usleep(20_000)
        } while Monotonic.seconds() < deadline
        return nil
    }

    static func isAlive(_ pid: pid_t) -> Bool {
        guard kill(pid, 0) == 0 || errno == EPERM else { return false }
        // A zombie is dead for our purposes (its parent may be an init that does not reap).
        guard let stat = ProcessStats.read("/proc/\(pid)/stat"), let close = stat.lastIndex(of: ")") else { return false }
        return !stat[stat.index(after: close)...].hasPrefix(" Z")
    }

    /// The NUL-separated arguments of every live process, by pid.
    static func commandLines() -> [(pid: pid_t, arguments: [String])] {
        ProcessStats.entries("/proc").compactMap { name in
            guard let pid = pid_t(name), let text = ProcessStats.read("/proc/\(name)/cmdline"), !text.isEmpty else { return nil }
            return (pid, text.split(separator: "\0", omittingEmptySubsequences: false).map(String.init))
        }
    }

    /// The Erlang VM running node `name` (beam.smp ... -name NAME ...), if any.
    static func beam(named name: String) -> pid_t? {
        commandLines().first { entry in
            guard entry.arguments.first?.hasSuffix("beam.smp") == true, isAlive(entry.pid) else { return false }
            return zip(entry.arguments, entry.arguments.dropFirst()).contains { $0 == "-name" && $1 == name }
        }?.pid
    }

    /// SIGKILLs VMs and epmds, and removes run folders, left by earlier test processes that died
    /// without tearing down (their names carry the test process's pid, which is gone now).
    static func killStrays() {
        for entry in commandLines() {
            let owner: String?
            if let first = entry.arguments.first, first.hasPrefix(EjabberdCluster.epmdTag) {
                owner = String(first.dropFirst(EjabberdCluster.epmdTag.count))
            } else if entry.arguments.first?.hasSuffix("beam.smp") == true,
                      let index = entry.arguments.firstIndex(of: "-name"), index + 1 < entry.arguments.count,
                      entry.arguments[index + 1].hasPrefix(EjabberdCluster.nodePrefix) {
                owner = entry.arguments[index + 1].dropFirst(EjabberdCluster.nodePrefix.count).split(separator: "-").first.map(String.init)
            } else {
                owner = nil
            }
            guard let owner, let ownerPID = pid_t(owner), ownerPID != getpid(), !isAlive(ownerPID) else { continue }
            kill(entry.pid, SIGKILL)
        }
        for name in ProcessStats.entries("/tmp") where name.hasPrefix(EjabberdCluster.folderPrefix) {
            let owner = name.dropFirst(EjabberdCluster.folderPrefix.count).split(separator: "-").first.flatMap { pid_t($0) }
            if let owner, owner != getpid(), !isAlive(owner) { TestFolders.remove("/tmp/" + name) }
        }
    }
}

// A helper process started with posix_spawn (no shell), its stdin and stdout our pipes and its
// stderr ours: the PKCS#11 bridge. Reaped by its owner (`stop`), never left a zombie.
#if canImport(Glibc)
import Glibc
#endif

public final class ChildProcess: @unchecked Sendable {
    // @unchecked Sendable: `exited` changes only under `lock`.
    public let pid: pid_t
    /// Our end of its stdin (we write) and of its stdout (we read).
    public let input: FileDescriptor
    public let output: FileDescriptor
    private let lock = Lock()
    private var exited: Int32?
    private var closed = false

    /// Starts `executable` with `arguments` (argv[1...]) and this process's environment.
    /// SIGPIPE is ignored from then on in this process: a child that dies must show as EPIPE
    /// on our next write, not kill us (the agent's run loop ignores it already; `keys` and
    /// `backup` did not need to before).
    public init(_ executable: String, _ arguments: [String]) throws(Errno) {
        _ = signal(SIGPIPE, SIG_IGN)
        let toChild = try FileDescriptor.pipe(nonBlocking: false)
        let fromChild: (readEnd: FileDescriptor, writeEnd: FileDescriptor)
        do throws(Errno) { fromChild = try FileDescriptor.pipe(nonBlocking: false) } catch {
            toChild.readEnd.close()
            toChild.writeEnd.close()
            throw error
        }
        var actions = posix_spawn_file_actions_t()
        posix_spawn_file_actions_init(&actions)
        defer { posix_spawn_file_actions_destroy(&actions) }
        // dup2 clears close-on-exec on the copies; the originals close at exec.
        posix_spawn_file_actions_adddup2(&actions, toChild.readEnd.rawValue, 0)
        posix_spawn_file_actions_adddup2(&actions, fromChild.writeEnd.rawValue, 1)
        let argv = ([executable] + arguments).map { strdup($0) } + [nil]
        defer { argv.forEach { free($0) } }
        var child: pid_t = 0
        let spawned = posix_spawn(&child, executable, &actions, nil, argv, environ)
        toChild.readEnd.close()
        fromChild.writeEnd.close()
        guard spawned == 0 else {
            toChild.writeEnd.close()
            fromChild.readEnd.close()
            throw Errno(spawned, "posix_spawn \(executable)")
        }
        pid = child
        input = toChild.writeEnd
        output = fromChild.readEnd
    }

    deinit { stop() }

    /// Its exit status (128 + signal when a signal ended it), or nil while it runs.
    public var exitStatus: Int32? {
        lock.withLock {
            if exited == nil {
                var status: Int32 = 0
                if waitpid(pid, &status, WNOHANG) == pid { exited = Self.decode(status) }
            }
            return exited
        }
    }

    /// Closes our ends (the child sees end of file on stdin and exits), waits up to
    /// `graceMillis` for it, then SIGKILLs and reaps it. Idempotent.
    @discardableResult
    public func stop(graceMillis: Int = 2000) -> Int32? {
        lock.withLock {
            if !closed {
                input.close()
                output.close()
                closed = true
            }
            if exited == nil {
                var status: Int32 = 0
                var waited = 0
                while exited == nil && waited < graceMillis {
                    if waitpid(pid, &status, WNOHANG) == pid { exited = Self.decode(status); break }
                    SystemClock.sleep(nanoseconds: 10_000_000)
                    waited += 10
                }
                if exited == nil {
                    kill(pid, SIGKILL)
                    while waitpid(pid, &status, 0) < 0 && errno == EINTR {}
                    exited = Self.decode(status)
                }
            }
            return exited
        }
    }

    private static func decode(_ status: Int32) -> Int32 {
        (status & 0x7f) == 0 ? (status >> 8) & 0xff : 128 + (status & 0x7f)
    }
}

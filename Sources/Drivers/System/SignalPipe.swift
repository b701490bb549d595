// Termination signals as a readable descriptor (the self-pipe trick): the handler only writes
// one byte, which is async-signal-safe, and the event loop polls the read end like a socket.
#if canImport(Glibc)
import Glibc
#endif
import Synchronization

/// The write end of the installed pipe, read by the signal handler (-1 before `install`).
private let signalPipeWriteEnd = Atomic<Int32>(-1)

private let forwardSignal: @convention(c) (Int32) -> Void = { signal in
    let fd = signalPipeWriteEnd.load(ordering: .relaxed)
    guard fd >= 0 else { return }
    let saved = errno
    var byte = UInt8(truncatingIfNeeded: signal)
    _ = write(fd, &byte, 1) // a full pipe already holds a pending signal: dropping this one is fine
    errno = saved
}

/// One per process: SIGINT and SIGTERM (by default) stop being fatal and become readable bytes.
public final class SignalPipe: Sendable {
    /// Poll this for `.readable`.
    public let descriptor: FileDescriptor
    private let writeEnd: FileDescriptor

    /// Installs handlers for `signals` and ignores SIGPIPE (writes to a closed socket then fail
    /// with EPIPE instead of killing the process).
    public static func install(_ signals: [Int32] = [SIGINT, SIGTERM]) throws(Errno) -> SignalPipe {
        var ends: [Int32] = [-1, -1]
        guard pipe(&ends) == 0 else { throw Errno.current("pipe") }
        for fd in ends {
            let flags = fcntl(fd, F_GETFL)
            guard flags >= 0, fcntl(fd, F_SETFL, flags | O_NONBLOCK) == 0, fcntl(fd, F_SETFD, FD_CLOEXEC) == 0 else {
                let failure = Errno.current("fcntl on signal pipe")
                ends.forEach { _ = close($0) }
                throw failure
            }
        }
        let pipe = SignalPipe(read: FileDescriptor(rawValue: ends[0]), write: FileDescriptor(rawValue: ends[1]))
        signalPipeWriteEnd.store(ends[1], ordering: .relaxed)
        _ = signal(SIGPIPE, SIG_IGN)
        for number in signals {
            var action = sigaction()
            action.__sigaction_handler.sa_handler = forwardSignal
            sigemptyset(&action.sa_mask)
            action.sa_flags = SA_RESTART
            guard sigaction(number, &action, nil) == 0 else { throw Errno.current("sigaction \(number)") }
        }
        return pipe
    }

    private init(read: FileDescriptor, write: FileDescriptor) {
        descriptor = read
        writeEnd = write
    }

    /// The signals received since the last call (empty when none), oldest first.
    public func drain() -> [Int32] {
        var received: [Int32] = []
        while case .data(let bytes)? = try? descriptor.readNonBlocking(upTo: 64) {
            received += bytes.map { Int32($0) }
        }
        return received
    }
}

extension FileDescriptor {
    /// read(2) on a non-blocking descriptor: `.wouldBlock` when empty, `.closed` at end of file.
    fileprivate func readNonBlocking(upTo count: Int) throws(Errno) -> SocketReceive {
        var buffer = [UInt8](repeating: 0, count: max(1, count))
        do throws(Errno) {
            let n = try retryOnInterrupt("read") {
                buffer.withUnsafeMutableBytes { Glibc.read(rawValue, $0.baseAddress, $0.count) }
            }
            return n == 0 ? .closed : .data(Array(buffer.prefix(n)))
        } catch where error.rawValue == EAGAIN || error.rawValue == EWOULDBLOCK {
            return .wouldBlock
        }
    }
}

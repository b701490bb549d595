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
    // A full pipe already holds a pending signal: dropping this one is fine.
    FileDescriptor(rawValue: fd).writeWakeByte(UInt8(truncatingIfNeeded: signal))
}

/// One per process: SIGINT and SIGTERM (by default) stop being fatal and become readable bytes.
public final class SignalPipe: Sendable {
    /// Poll this for `.readable`.
    public let descriptor: FileDescriptor
    private let writeEnd: FileDescriptor

    /// Installs handlers for `signals` and ignores SIGPIPE (writes to a closed socket then fail
    /// with EPIPE instead of killing the process).
    public static func install(_ signals: [Int32] = [SIGINT, SIGTERM]) throws(Errno) -> SignalPipe {
        let ends = try FileDescriptor.pipe(nonBlocking: true)
        let pipe = SignalPipe(read: ends.readEnd, write: ends.writeEnd)
        signalPipeWriteEnd.store(ends.writeEnd.rawValue, ordering: .relaxed)
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

// Wakes the agent loop from another thread (the actuation worker): the thread stores its
// result behind a lock and writes one byte; the loop polls the read end like a socket.
#if canImport(Glibc)
import Glibc
#endif
import Drivers

final class WakePipe: Sendable {
    /// Poll for `.readable`, then `drain()`.
    let readEnd: FileDescriptor
    private let writeEnd: FileDescriptor

    init() throws(Errno) {
        var ends: [Int32] = [-1, -1]
        // Non-blocking both ways: a full pipe already holds a pending wake-up, and the loop
        // must never wait on an empty one.
        guard pipe(&ends) == 0 else { throw Errno.current("pipe") }
        for fd in ends {
            let flags = fcntl(fd, F_GETFL)
            guard flags >= 0, fcntl(fd, F_SETFL, flags | O_NONBLOCK) == 0, fcntl(fd, F_SETFD, FD_CLOEXEC) == 0 else {
                let failure = Errno.current("fcntl on wake pipe")
                ends.forEach { _ = Glibc.close($0) }
                throw failure
            }
        }
        readEnd = FileDescriptor(rawValue: ends[0])
        writeEnd = FileDescriptor(rawValue: ends[1])
    }

    /// Async-signal-safe and thread-safe: one write(2) of one byte.
    func wake() {
        var byte: UInt8 = 1
        _ = write(writeEnd.rawValue, &byte, 1)
    }

    /// Empties the pipe so the next poll waits for the next wake-up.
    func drain() {
        var buffer = [UInt8](repeating: 0, count: 64)
        while buffer.withUnsafeMutableBytes({ read(readEnd.rawValue, $0.baseAddress, $0.count) }) > 0 {}
    }

    func close() {
        readEnd.close()
        writeEnd.close()
    }
}

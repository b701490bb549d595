// Wakes the agent loop from another thread (the actuation worker): the thread stores its
// result behind a lock and writes one byte; the loop polls the read end like a socket.
import Drivers

final class WakePipe: Sendable {
    /// Poll for `.readable`, then `drain()`.
    let readEnd: FileDescriptor
    private let writeEnd: FileDescriptor

    init() throws(Errno) {
        // Non-blocking both ways: a full pipe already holds a pending wake-up, and the loop
        // must never wait on an empty one.
        (readEnd, writeEnd) = try FileDescriptor.pipe(nonBlocking: true)
    }

    /// Async-signal-safe and thread-safe: one write(2) of one byte.
    func wake() {
        writeEnd.writeWakeByte(1)
    }

    /// Empties the pipe so the next poll waits for the next wake-up.
    func drain() {
        while case .data? = try? readEnd.readNonBlocking(upTo: 64) {}
    }

    func close() {
        readEnd.close()
        writeEnd.close()
    }
}

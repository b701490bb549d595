// The console's output queue: bounded, written without ever waiting. A peer that stops reading
// (a terminal program paused, a cable with RX only) must cost the agent's loop nothing, so
// whole lines that do not fit are dropped and counted instead of blocking on write(2).
// Pure bookkeeping plus one non-blocking write per flush; unit-tested over openpty.
//
// A descriptor that is blocking after all (stdout when the console could not get a
// non-blocking description of its own, see ConsoleTransport) is written only after poll(2)
// says it is writable, at most `blockingWriteLimit` bytes at a time: a pipe that polls
// writable has room for PIPE_BUF (4096) bytes, so such a write returns without waiting.
#if canImport(Glibc)
import Glibc
#endif

public struct BoundedOutput: Sendable {
    public static let defaultCapacity = 64 * 1024
    /// Largest single write to a blocking descriptor (PIPE_BUF on Linux).
    public static let blockingWriteLimit = 4096

    /// Most bytes queued at once; a chunk that would pass it is dropped whole.
    public let capacity: Int
    private var bytes: [UInt8] = []
    /// Bytes before this index were written already (compacted lazily, not on every write).
    private var head = 0
    /// Lines dropped since start (the console's `status` shows it).
    public private(set) var droppedLines = 0
    /// True from a drop until the queue empties again: one drop episode, logged once.
    public private(set) var dropping = false

    public init(capacity: Int = defaultCapacity) {
        self.capacity = max(1, capacity)
    }

    public var pendingCount: Int { bytes.count - head }
    public var isEmpty: Bool { pendingCount == 0 }

    /// What `enqueue` did.
    public enum Admission: Sendable, Equatable {
        case queued
        /// Dropped; `episodeStarted` is true for the first drop since the queue last emptied.
        case dropped(episodeStarted: Bool)
    }

    /// Queues `chunk` whole, or drops it whole when it does not fit (a half line on a terminal
    /// is worse than a missing one). `isLine` false: echo or prompt bytes, not counted as lines.
    @discardableResult
    public mutating func enqueue(_ chunk: [UInt8], isLine: Bool = true) -> Admission {
        guard !chunk.isEmpty else { return .queued }
        guard pendingCount + chunk.count <= capacity else {
            if isLine { droppedLines += 1 }
            let started = !dropping
            dropping = true
            return .dropped(episodeStarted: started)
        }
        bytes += chunk
        return .queued
    }

    /// One non-blocking write of what is queued; returns the bytes written (0 when the
    /// descriptor would block). An emptied queue ends the drop episode. On a blocking
    /// descriptor: writes of at most `blockingWriteLimit` bytes, each after poll(2) said writable.
    @discardableResult
    public mutating func flush(to output: FileDescriptor) throws(SerialError) -> Int {
        guard !isEmpty else { return 0 }
        guard let flags = try? output.statusFlags(), flags & O_NONBLOCK == 0 else { return try writeOnce(to: output, upTo: pendingCount) }
        var total = 0
        while !isEmpty, try output.poll(events: Int16(POLLOUT), timeoutMillis: 0) & Int16(POLLOUT) != 0 {
            let written = try writeOnce(to: output, upTo: Self.blockingWriteLimit)
            total += written
            if written == 0 { break }
        }
        return total
    }

    private mutating func writeOnce(to output: FileDescriptor, upTo limit: Int) throws(SerialError) -> Int {
        let written = try output.writeSome(bytes[head..<min(bytes.count, head + limit)])
        head += written
        if head == bytes.count {
            bytes.removeAll(keepingCapacity: true)
            head = 0
            dropping = false
        } else if head >= capacity / 2 {
            // Compact now and then, so the array never grows past about twice the capacity.
            bytes.removeFirst(head)
            head = 0
        }
        return written
    }
}

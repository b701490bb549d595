// The phone's end of the simulated BLE link (`carkey phone`, tests): blocking, one message at a
// time, and every wait bounded by a deadline on the monotonic clock.
import Protocol

public enum SimulatedLinkError: Error, Equatable, Sendable, CustomStringConvertible {
    case connectFailed(Errno)
    case io(Errno)
    /// Nothing (or only part of a frame) arrived before the deadline.
    case timedOut(afterMillis: UInt64)
    /// The car closed the connection.
    case closedByPeer
    case malformedFrame(LinkFrameError)

    public var description: String {
        switch self {
        case .connectFailed(let error): return "cannot connect: \(error)"
        case .io(let error): return "link I/O failed: \(error)"
        case .timedOut(let millis): return "no answer from the car within \(millis) ms"
        case .closedByPeer: return "the car closed the connection"
        case .malformedFrame(let error): return "the car sent a \(error)"
        }
    }
}

public final class SimulatedLinkClient {
    private let descriptor: FileDescriptor
    private let clock: any MonotonicClock
    private var assembler = LinkFrameAssembler()
    private var received: [Bytes] = []
    /// How long each `send` or `receive` may wait.
    public let timeoutMillis: UInt64

    public init(socketPath: String, timeoutMillis: UInt64, clock: any MonotonicClock = SystemClock()) throws(SimulatedLinkError) {
        do throws(Errno) { descriptor = try UnixSocket.connect(path: socketPath) } catch { throw .connectFailed(error) }
        // Poll bounds every wait; the kernel timeout also bounds a send that finds too little room.
        try? descriptor.setSocketTimeouts(milliseconds: Int(clamping: timeoutMillis))
        self.clock = clock
        self.timeoutMillis = timeoutMillis
    }

    deinit { descriptor.close() }

    /// Frames and writes `message`, waiting at most the timeout for socket buffer space.
    public func send(_ message: Bytes) throws(SimulatedLinkError) {
        let frame: Bytes
        do throws(LinkFrameError) { frame = try LinkFraming.frame(message) } catch { throw .malformedFrame(error) }
        let deadline = clock.nowMillis() + timeoutMillis
        var offset = 0
        while offset < frame.count {
            try wait(for: .writable, until: deadline)
            do throws(Errno) { offset += try descriptor.sendSome(frame[offset...]) } catch { throw .io(error) }
        }
    }

    /// Writes `bytes` to the stream as they are, without a length header.
    public func sendUnframed(_ bytes: Bytes) throws(SimulatedLinkError) {
        let deadline = clock.nowMillis() + timeoutMillis
        var offset = 0
        while offset < bytes.count {
            try wait(for: .writable, until: deadline)
            do throws(Errno) { offset += try descriptor.sendSome(bytes[offset...]) } catch { throw .io(error) }
        }
    }

    /// The next message from the car, waiting at most the timeout.
    public func receive() throws(SimulatedLinkError) -> Bytes {
        let deadline = clock.nowMillis() + timeoutMillis
        while received.isEmpty {
            try wait(for: .readable, until: deadline)
            let result: SocketReceive
            do throws(Errno) { result = try descriptor.receive(upTo: 4096) } catch { throw .io(error) }
            switch result {
            case .wouldBlock: continue
            case .closed: throw .closedByPeer
            case .data(let bytes):
                do throws(LinkFrameError) { received += try assembler.append(bytes) } catch { throw .malformedFrame(error) }
            }
        }
        return received.removeFirst()
    }

    private func wait(for events: PollEvents, until deadline: UInt64) throws(SimulatedLinkError) {
        let now = clock.nowMillis()
        guard now < deadline else { throw .timedOut(afterMillis: timeoutMillis) }
        let ready: [PollEvents]
        do throws(Errno) { ready = try Poll.wait([(descriptor, events)], timeoutMillis: Int32(clamping: deadline - now)) } catch { throw .io(error) }
        guard let first = ready.first, !first.isEmpty else { throw .timedOut(afterMillis: timeoutMillis) }
    }
}

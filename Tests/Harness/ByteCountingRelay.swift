// A TCP relay on a free loopback port that forwards every accepted connection to a target (the
// broker) and counts the bytes each way: what a car's cellular modem carries as TCP payload (TLS
// records included; IP and TCP headers are not, a relay never sees them). It also counts the
// reads that returned data, the nearest thing to segments it can see, and keeps a bounded log of
// them with their times, so a benchmark can tell a keepalive exchange from a publish.
//
// One thread sleeps in poll(2) on the listener, both sockets of every connection and a wake
// pipe (no timeout, no busy loop). A side is read only once what was read from it before was
// passed on, so buffers stay bounded (backpressure). cutAll() resets every connection at once,
// as a carrier NAT that dropped its mappings answers the next packet.
#if canImport(Glibc)
import Glibc
#endif
import Synchronization
import Drivers

public final class ByteCountingRelay: Sendable {
    public enum Direction: Sendable, Equatable {
        /// Car to broker ("sent by the car").
        case sentByCar
        /// Broker to car ("received by the car").
        case receivedByCar
    }

    public struct Counts: Sendable, Equatable {
        public var sentByCar = 0
        public var receivedByCar = 0
        /// Reads that returned data, per direction.
        public var sentChunks = 0
        public var receivedChunks = 0
        /// Connections accepted and relayed.
        public var connections = 0
        /// Connections accepted, relayed or not: with an unreachable target each is closed at
        /// once, so the car sees one failed connect attempt per count.
        public var attempts = 0

        public init() {}

        public var totalBytes: Int { sentByCar + receivedByCar }

        /// What was counted between `earlier` and `later`.
        public static func - (later: Counts, earlier: Counts) -> Counts {
            var delta = Counts()
            delta.sentByCar = later.sentByCar - earlier.sentByCar
            delta.receivedByCar = later.receivedByCar - earlier.receivedByCar
            delta.sentChunks = later.sentChunks - earlier.sentChunks
            delta.receivedChunks = later.receivedChunks - earlier.receivedChunks
            delta.connections = later.connections - earlier.connections
            delta.attempts = later.attempts - earlier.attempts
            return delta
        }
    }

    /// One read: which way, how many bytes, when (monotonic milliseconds).
    public struct Chunk: Sendable, Equatable {
        public let direction: Direction
        public let bytes: Int
        public let millis: UInt64
    }

    public enum Failure: Error, Equatable { case socket(step: String, errno: Int32) }

    /// Where cars connect: 127.0.0.1:port.
    public let port: Int32
    public let targetHost: String
    public let targetPort: Int32
    /// The chunk log keeps about the latest this many reads.
    public static let chunkLogLimit = 100_000

    private struct Shared {
        var counts = Counts()
        var chunks: [Chunk] = []
        var open = 0
        var cutsRequested = 0
        var cutsDone = 0
        var stopping = false
    }

    private let listener: Int32
    private let wakeRead: Int32
    private let wakeWrite: Int32
    private let shared = Mutex(Shared())
    private let thread = Mutex<SystemThread?>(nil)

    /// Listens on a free loopback port and relays each connection to `targetHost:targetPort`.
    public init(targetHost: String = "127.0.0.1", targetPort: Int32) throws(Failure) {
        self.targetHost = targetHost
        self.targetPort = targetPort
        let fd = socket(AF_INET, Int32(SOCK_STREAM.rawValue) | Int32(SOCK_CLOEXEC.rawValue), 0)
        guard fd >= 0 else { throw .socket(step: "socket", errno: errno) }
        var one: Int32 = 1
        setsockopt(fd, SOL_SOCKET, SO_REUSEADDR, &one, socklen_t(MemoryLayout<Int32>.size))
        var address = Self.address(host: "127.0.0.1", port: 0)
        var length = socklen_t(MemoryLayout<sockaddr_in>.size)
        let bound = withUnsafeMutablePointer(to: &address) { pointer in
            pointer.withMemoryRebound(to: sockaddr.self, capacity: 1) { bind(fd, $0, length) == 0 && getsockname(fd, $0, &length) == 0 }
        }
        guard bound, listen(fd, 64) == 0 else {
            let code = errno
            close(fd)
            throw .socket(step: "bind/listen", errno: code)
        }
        Self.setNonBlocking(fd)
        // pipe2 and accept4 need _GNU_SOURCE, which Swift's Glibc module does not define.
        var ends: [Int32] = [-1, -1]
        guard pipe(&ends) == 0 else {
            let code = errno
            close(fd)
            throw .socket(step: "pipe", errno: code)
        }
        for end in ends {
            Self.setNonBlocking(end)
            _ = fcntl(end, F_SETFD, FD_CLOEXEC)
        }
        listener = fd
        wakeRead = ends[0]
        wakeWrite = ends[1]
        port = Int32(UInt16(bigEndian: address.sin_port))
        let started = HarnessThread.start(self) { $0.run() }
        thread.withLock { $0 = started }
    }

    deinit { stop() }

    /// The counts since the start or the last reset.
    public var counts: Counts { shared.withLock { $0.counts } }

    /// Connections relayed right now.
    public var openConnections: Int { shared.withLock { $0.open } }

    /// The reads since the start or the last reset, oldest first.
    public var chunks: [Chunk] { shared.withLock { $0.chunks } }

    /// Zeroes the counts (open connections stay) and the chunk log; returns the counts as they were.
    @discardableResult
    public func reset() -> Counts {
        shared.withLock { state in
            defer { state.counts = Counts(); state.chunks = [] }
            return state.counts
        }
    }

    /// Resets every open connection (RST to both ends); new connections are still accepted.
    /// Returns once the relay thread has done it (at most `timeoutSeconds`).
    public func cutAll(timeoutSeconds: Double = 5) {
        let target = shared.withLock { state -> Int in
            state.cutsRequested += 1
            return state.cutsRequested
        }
        wake()
        _ = waitForState(timeoutSeconds: timeoutSeconds) { $0.cutsDone >= target || $0.stopping }
    }

    /// Closes every connection and the listener and joins the thread. Idempotent.
    public func stop() {
        shared.withLock { $0.stopping = true }
        wake()
        if let running = thread.withLock({ value -> SystemThread? in defer { value = nil }; return value }) {
            running.join()
            close(listener)
            close(wakeRead)
            close(wakeWrite)
        }
    }

    /// Checks `condition` on the counts every 20 ms until it holds (true) or time is up (false).
    public func wait(timeoutSeconds: Double, until condition: (Counts) -> Bool) -> Bool {
        waitForState(timeoutSeconds: timeoutSeconds) { condition($0.counts) }
    }

    /// Waits until no byte moved for `quietSeconds` (true), or `timeoutSeconds` passed (false).
    public func waitForQuiet(quietSeconds: Double, timeoutSeconds: Double) -> Bool {
        let deadline = Self.nowMillis() + UInt64(timeoutSeconds * 1000)
        var last = counts.totalBytes
        var since = Self.nowMillis()
        while Self.nowMillis() < deadline {
            usleep(50_000)
            let now = counts.totalBytes
            if now != last {
                last = now
                since = Self.nowMillis()
            } else if Self.nowMillis() - since >= UInt64(quietSeconds * 1000) {
                return true
            }
        }
        return false
    }

    private func waitForState(timeoutSeconds: Double, _ condition: (Shared) -> Bool) -> Bool {
        let deadline = Self.nowMillis() + UInt64(timeoutSeconds * 1000)
        while !shared.withLock({ condition($0) }) {
            if Self.nowMillis() >= deadline { return false }
            usleep(20_000)
        }
        return true
    }

    // MARK: The relay thread

    /// One relayed connection; touched by the relay thread only.
    private final class Link {
        let car: Int32
        let broker: Int32
        /// Read from one side, not yet written to the other.
        var toBroker: [UInt8] = []
        var toCar: [UInt8] = []
        /// End of stream read from that side.
        var carEnded = false
        var brokerEnded = false
        /// End of stream passed on (shutdown(SHUT_WR)) to that side.
        var brokerShut = false
        var carShut = false
        init(car: Int32, broker: Int32) { self.car = car; self.broker = broker }
    }

    private func run() {
        var links: [Link] = []
        var cutsDone = 0
        var buffer = [UInt8](repeating: 0, count: 65_536)
        while true {
            let (stopping, cuts) = shared.withLock { ($0.stopping, $0.cutsRequested) }
            if stopping || cuts > cutsDone {
                links.forEach(Self.reset)
                links.removeAll()
                cutsDone = cuts
                shared.withLock { $0.open = 0; $0.cutsDone = cuts }
                if stopping { return }
            }
            var fds = [pollfd(fd: wakeRead, events: Int16(POLLIN), revents: 0), pollfd(fd: listener, events: Int16(POLLIN), revents: 0)]
            for link in links {
                fds.append(Self.request(link.car, read: link.toBroker.isEmpty && !link.carEnded, write: !link.toCar.isEmpty))
                fds.append(Self.request(link.broker, read: link.toCar.isEmpty && !link.brokerEnded, write: !link.toBroker.isEmpty))
            }
            if poll(&fds, nfds_t(fds.count), -1) < 0 {
                if errno != EINTR { usleep(10_000) }  // ENOMEM: wait rather than spin.
                continue
            }
            if fds[0].revents != 0 { drainWake() }
            var kept: [Link] = []
            for (index, link) in links.enumerated() {
                if service(link, carEvents: fds[2 + 2 * index].revents, brokerEvents: fds[3 + 2 * index].revents, buffer: &buffer) {
                    kept.append(link)
                } else {
                    close(link.car)
                    close(link.broker)
                }
            }
            // After the loop over the polled links: a new one has no pollfd entries yet.
            if fds[1].revents & Int16(POLLIN) != 0, let link = accept() { kept.append(link) }
            if kept.count != links.count { shared.withLock { $0.open = kept.count } }
            links = kept
        }
    }

    /// Moves bytes for one link; false when it is finished (both ways ended) or failed.
    private func service(_ link: Link, carEvents: Int16, brokerEvents: Int16, buffer: inout [UInt8]) -> Bool {
        let readable = Int16(POLLIN | POLLHUP | POLLERR)
        if carEvents & readable != 0 && link.toBroker.isEmpty && !link.carEnded {
            switch receive(link.car, into: &buffer, direction: .sentByCar) {
            case .data(let bytes): link.toBroker = bytes
            case .end: link.carEnded = true
            case .again: break
            case .failed: return false
            }
        }
        if brokerEvents & readable != 0 && link.toCar.isEmpty && !link.brokerEnded {
            switch receive(link.broker, into: &buffer, direction: .receivedByCar) {
            case .data(let bytes): link.toCar = bytes
            case .end: link.brokerEnded = true
            case .again: break
            case .failed: return false
            }
        }
        guard Self.flush(&link.toBroker, to: link.broker), Self.flush(&link.toCar, to: link.car) else { return false }
        // An end of stream is passed on once everything before it was.
        if link.carEnded && link.toBroker.isEmpty && !link.brokerShut {
            shutdown(link.broker, Int32(SHUT_WR))
            link.brokerShut = true
        }
        if link.brokerEnded && link.toCar.isEmpty && !link.carShut {
            shutdown(link.car, Int32(SHUT_WR))
            link.carShut = true
        }
        return !(link.brokerShut && link.carShut)
    }

    private enum Received { case data([UInt8]), end, again, failed }

    private func receive(_ fd: Int32, into buffer: inout [UInt8], direction: Direction) -> Received {
        let count = buffer.withUnsafeMutableBytes { recv(fd, $0.baseAddress, $0.count, 0) }
        if count > 0 {
            let chunk = Chunk(direction: direction, bytes: count, millis: Self.nowMillis())
            shared.withLock { state in
                switch direction {
                case .sentByCar:
                    state.counts.sentByCar += count
                    state.counts.sentChunks += 1
                case .receivedByCar:
                    state.counts.receivedByCar += count
                    state.counts.receivedChunks += 1
                }
                if state.chunks.count >= Self.chunkLogLimit { state.chunks.removeFirst(Self.chunkLogLimit / 10) }
                state.chunks.append(chunk)
            }
            return .data(Array(buffer[0..<count]))
        }
        if count == 0 { return .end }
        return errno == EAGAIN || errno == EWOULDBLOCK || errno == EINTR ? .again : .failed
    }

    /// Writes what the socket takes now; false on a write error (the peer is gone).
    private static func flush(_ pending: inout [UInt8], to fd: Int32) -> Bool {
        guard !pending.isEmpty else { return true }
        let written = pending.withUnsafeBytes { send(fd, $0.baseAddress, $0.count, Int32(MSG_NOSIGNAL)) }
        if written > 0 {
            pending.removeFirst(written)
            return true
        }
        return written < 0 && (errno == EAGAIN || errno == EWOULDBLOCK || errno == EINTR)
    }

    /// A new car connection and its own connection to the target, or nil (the car's socket is
    /// then closed: the car sees the broker as unreachable).
    private func accept() -> Link? {
        let car = Glibc.accept(listener, nil, nil)
        guard car >= 0 else { return nil }
        _ = fcntl(car, F_SETFD, FD_CLOEXEC)
        shared.withLock { $0.counts.attempts += 1 }
        let broker = socket(AF_INET, Int32(SOCK_STREAM.rawValue) | Int32(SOCK_CLOEXEC.rawValue), 0)
        var address = Self.address(host: targetHost, port: targetPort)
        // A blocking connect on loopback: immediate, and the car waits for it anyway.
        let connected = broker >= 0 && withUnsafePointer(to: &address) { pointer in
            pointer.withMemoryRebound(to: sockaddr.self, capacity: 1) { connect(broker, $0, socklen_t(MemoryLayout<sockaddr_in>.size)) == 0 }
        }
        guard connected else {
            if broker >= 0 { close(broker) }
            close(car)
            return nil
        }
        // Pass each read on at once, as the endpoint sent it (no coalescing by Nagle here).
        var one: Int32 = 1
        for fd in [car, broker] {
            setsockopt(fd, Int32(IPPROTO_TCP), TCP_NODELAY, &one, socklen_t(MemoryLayout<Int32>.size))
            Self.setNonBlocking(fd)
        }
        shared.withLock {
            $0.counts.connections += 1
            $0.open += 1
        }
        return Link(car: car, broker: broker)
    }

    /// RST to both ends (SO_LINGER 0), as a middlebox that lost the mapping answers.
    private static func reset(_ link: Link) {
        var linger = Glibc.linger(l_onoff: 1, l_linger: 0)
        for fd in [link.car, link.broker] {
            setsockopt(fd, SOL_SOCKET, SO_LINGER, &linger, socklen_t(MemoryLayout<Glibc.linger>.size))
            close(fd)
        }
    }

    private func wake() {
        var byte: UInt8 = 1
        _ = write(wakeWrite, &byte, 1)
    }

    private func drainWake() {
        var sink = [UInt8](repeating: 0, count: 64)
        while read(wakeRead, &sink, sink.count) > 0 {}
    }

    /// A pollfd for what this side is wanted for; nothing wanted leaves it out (fd -1), since a
    /// hung-up socket would otherwise wake poll for ever.
    private static func request(_ fd: Int32, read: Bool, write: Bool) -> pollfd {
        let events = (read ? Int16(POLLIN) : 0) | (write ? Int16(POLLOUT) : 0)
        return pollfd(fd: events == 0 ? -1 : fd, events: events, revents: 0)
    }

    private static func setNonBlocking(_ fd: Int32) {
        _ = fcntl(fd, F_SETFL, fcntl(fd, F_GETFL) | O_NONBLOCK)
    }

    private static func address(host: String, port: Int32) -> sockaddr_in {
        var address = sockaddr_in()
        address.sin_family = sa_family_t(AF_INET)
        address.sin_addr.s_addr = inet_addr(host)
        address.sin_port = UInt16(port).bigEndian
        return address
    }

    static func nowMillis() -> UInt64 {
        var mono = timespec()
        clock_gettime(CLOCK_MONOTONIC, &mono)
        return UInt64(mono.tv_sec) * 1000 + UInt64(mono.tv_nsec) / 1_000_000
    }
}

// The harness's byte-counting relay (the cellular bill's meter): every byte written on one side
// arrives on the other and is counted once, in the right direction; reset() zeroes the meter;
// cutAll() resets live connections (as a NAT drop) while the relay keeps accepting new ones.
import XCTest
import TestHarness
#if canImport(Glibc)
import Glibc
#endif

final class ByteCountingRelayTests: XCTestCase {
    func testBytesBothWaysAreForwardedAndCountedExactly() throws {
        let target = try Listener()
        let relay = try ByteCountingRelay(targetPort: target.port)
        defer { relay.stop() }
        let car = try Self.connect(port: relay.port)
        defer { close(car) }
        let broker = try target.accept()
        defer { close(broker) }

        // Uneven sizes, more than one read buffer, each checked byte for byte on arrival.
        let upstream = (0..<150_001).map { UInt8(truncatingIfNeeded: $0 &* 31 &+ $0 >> 9) }
        let downstream = (0..<70_007).map { UInt8(truncatingIfNeeded: $0 &* 7 &+ $0 >> 8) }
        try Self.transfer(upstream, from: car, to: broker)
        try Self.transfer(downstream, from: broker, to: car)
        try Self.transfer([0x31], from: car, to: broker)

        let counts = relay.counts
        XCTAssertEqual(counts.sentByCar, upstream.count + 1)
        XCTAssertEqual(counts.receivedByCar, downstream.count)
        XCTAssertEqual(counts.connections, 1)
        XCTAssertGreaterThanOrEqual(counts.sentChunks, 2)
        XCTAssertGreaterThanOrEqual(counts.receivedChunks, 1)
        let log = relay.chunks
        XCTAssertEqual(log.filter { $0.direction == .sentByCar }.map(\.bytes).reduce(0, +), counts.sentByCar)
        XCTAssertEqual(log.filter { $0.direction == .receivedByCar }.map(\.bytes).reduce(0, +), counts.receivedByCar)
        XCTAssertEqual(log.filter { $0.direction == .sentByCar }.count, counts.sentChunks)
        XCTAssertEqual(log.last?.direction, .sentByCar)
        XCTAssertEqual(log.last?.bytes, 1)

        // reset() hands back what was counted and starts from zero.
        XCTAssertEqual(relay.reset(), counts)
        XCTAssertEqual(relay.counts, ByteCountingRelay.Counts())
        XCTAssertTrue(relay.chunks.isEmpty)
        try Self.transfer(Array("PINGREQ".utf8), from: car, to: broker)
        XCTAssertEqual(relay.counts.sentByCar, 7)
        XCTAssertEqual(relay.counts.receivedByCar, 0)

        // A clean close by the car reaches the broker as end of stream, after the data.
        shutdown(car, Int32(SHUT_WR))
        XCTAssertEqual(try Self.receive(broker, upTo: 16), [], "end of stream passed on")
    }

    func testCutResetsLiveConnectionsAndNewOnesStillWork() throws {
        let target = try Listener()
        let relay = try ByteCountingRelay(targetPort: target.port)
        defer { relay.stop() }
        let car = try Self.connect(port: relay.port)
        defer { close(car) }
        let broker = try target.accept()
        defer { close(broker) }
        try Self.transfer([1, 2, 3], from: car, to: broker)
        XCTAssertEqual(relay.openConnections, 1)

        relay.cutAll()
        XCTAssertEqual(relay.openConnections, 0)
        // Both ends learn it: a reset (or end of stream) on read, never a hang.
        for end in [car, broker] {
            do {
                let after = try Self.receive(end, upTo: 16)
                XCTAssertEqual(after, [], "nothing after the cut")
            } catch is Timeout {
                XCTFail("the cut was not noticed in 5 s")
            } catch {
                // ECONNRESET: what a reset looks like.
            }
        }

        let again = try Self.connect(port: relay.port)
        defer { close(again) }
        let second = try target.accept()
        defer { close(second) }
        try Self.transfer([9, 9], from: second, to: again)
        XCTAssertEqual(relay.counts.connections, 2)
        XCTAssertEqual(relay.counts.sentByCar, 3)
        XCTAssertEqual(relay.counts.receivedByCar, 2)
        XCTAssertEqual(relay.openConnections, 1)
    }

    func testStopClosesTheListener() throws {
        let target = try Listener()
        let relay = try ByteCountingRelay(targetPort: target.port)
        let port = relay.port
        relay.stop()
        relay.stop()
        XCTAssertFalse(MosquittoBroker.canConnect(port: port))
    }

    // MARK: Helpers (blocking sockets with 5 s timeouts: a hang fails instead of stalling)

    struct Timeout: Error {}
    struct Cut: Error {}
    struct SocketError: Error { let step: String; let code: Int32 }

    /// A plain TCP server on a free loopback port standing in for the broker.
    final class Listener {
        let fd: Int32
        let port: Int32
        init() throws {
            port = try MosquittoBroker.freeLoopbackPort()
            fd = socket(AF_INET, Int32(SOCK_STREAM.rawValue), 0)
            var one: Int32 = 1
            setsockopt(fd, SOL_SOCKET, SO_REUSEADDR, &one, socklen_t(MemoryLayout<Int32>.size))
            var address = ByteCountingRelayTests.address(port: port)
            let bound = withUnsafePointer(to: &address) { pointer in
                pointer.withMemoryRebound(to: sockaddr.self, capacity: 1) { bind(fd, $0, socklen_t(MemoryLayout<sockaddr_in>.size)) == 0 }
            }
            guard bound, listen(fd, 8) == 0 else { throw SocketError(step: "listen", code: errno) }
        }
        deinit { close(fd) }

        func accept() throws -> Int32 {
            var request = pollfd(fd: fd, events: Int16(POLLIN), revents: 0)
            guard poll(&request, 1, 5000) == 1 else { throw Timeout() }
            let accepted = Glibc.accept(fd, nil, nil)
            guard accepted >= 0 else { throw SocketError(step: "accept", code: errno) }
            ByteCountingRelayTests.setTimeouts(accepted)
            return accepted
        }
    }

    static func address(port: Int32) -> sockaddr_in {
        var address = sockaddr_in()
        address.sin_family = sa_family_t(AF_INET)
        address.sin_addr.s_addr = inet_addr("127.0.0.1")
        address.sin_port = UInt16(port).bigEndian
        return address
    }

    static func setTimeouts(_ fd: Int32) {
        var limit = timeval(tv_sec: 5, tv_usec: 0)
        setsockopt(fd, SOL_SOCKET, SO_RCVTIMEO, &limit, socklen_t(MemoryLayout<timeval>.size))
        setsockopt(fd, SOL_SOCKET, SO_SNDTIMEO, &limit, socklen_t(MemoryLayout<timeval>.size))
    }

    static func connect(port: Int32) throws -> Int32 {
        let fd = socket(AF_INET, Int32(SOCK_STREAM.rawValue), 0)
        var address = address(port: port)
        let connected = withUnsafePointer(to: &address) { pointer in
            pointer.withMemoryRebound(to: sockaddr.self, capacity: 1) { Glibc.connect(fd, $0, socklen_t(MemoryLayout<sockaddr_in>.size)) == 0 }
        }
        guard connected else { close(fd); throw SocketError(step: "connect", code: errno) }
        setTimeouts(fd)
        return fd
    }

    /// Writes `bytes` in 16 KiB pieces, each read back whole on the other side before the next.
    static func transfer(_ bytes: [UInt8], from source: Int32, to destination: Int32) throws {
        var offset = 0
        while offset < bytes.count {
            let piece = Array(bytes[offset..<min(bytes.count, offset + 16_384)])
            let written = piece.withUnsafeBytes { send(source, $0.baseAddress, $0.count, Int32(MSG_NOSIGNAL)) }
            guard written == piece.count else { throw SocketError(step: "send", code: errno) }
            var arrived: [UInt8] = []
            while arrived.count < piece.count {
                let more = try receive(destination, upTo: piece.count - arrived.count)
                guard !more.isEmpty else { throw Cut() }
                arrived += more
            }
            XCTAssertEqual(arrived, piece, "bytes changed on the way")
            offset += piece.count
        }
    }

    /// One recv: the bytes, [] at end of stream; throws on a reset or after 5 s.
    static func receive(_ fd: Int32, upTo limit: Int) throws -> [UInt8] {
        var buffer = [UInt8](repeating: 0, count: limit)
        let count = buffer.withUnsafeMutableBytes { recv(fd, $0.baseAddress, $0.count, 0) }
        if count >= 0 { return Array(buffer[0..<count]) }
        if errno == EAGAIN || errno == EWOULDBLOCK { throw Timeout() }
        throw SocketError(step: "recv", code: errno)
    }
}

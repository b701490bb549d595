// The simulated BLE link: framing, the car's socket server and the phone's client, over real
// Unix sockets in a temporary folder.
import XCTest
@testable import Drivers
import Protocol
#if canImport(Glibc)
import Glibc
#endif

final class LinkFrameAssemblerTests: XCTestCase {
    func testFramesSplitAnywhereAreReassembled() throws {
        let messages: [Bytes] = [[1], Bytes(repeating: 7, count: 300), Bytes(repeating: 9, count: 1024)]
        let stream = try messages.flatMap { try LinkFraming.frame($0) }
        for chunk in [1, 2, 3, 255, 4096] {
            var assembler = LinkFrameAssembler()
            var out: [Bytes] = []
            var offset = 0
            while offset < stream.count {
                let end = min(stream.count, offset + chunk)
                out += try assembler.append(Array(stream[offset..<end]))
                offset = end
            }
            XCTAssertEqual(out, messages, "chunk \(chunk)")
            XCTAssertEqual(assembler.pendingByteCount, 0)
        }
    }

    func testHeaderIsBigEndianLength() throws {
        XCTAssertEqual(try LinkFraming.frame(Bytes(repeating: 0xAB, count: 0x0102)).prefix(3), [0x01, 0x02, 0xAB])
    }

    func testEmptyAndOversizedFramesAreRefusedBeforeTheirBody() throws {
        var assembler = LinkFrameAssembler()
        XCTAssertThrowsError(try assembler.append([0x04, 0x01])) { // 1025: refused on the header alone
            XCTAssertEqual($0 as? LinkFrameError, .oversized(length: 1025, limit: 1024))
        }
        var other = LinkFrameAssembler()
        XCTAssertThrowsError(try other.append([0x00, 0x00])) { XCTAssertEqual($0 as? LinkFrameError, .empty) }
        XCTAssertThrowsError(try LinkFraming.frame([]))
        XCTAssertThrowsError(try LinkFraming.frame(Bytes(repeating: 0, count: 1025)))
    }
}

final class SimulatedLinkServerTests: XCTestCase {
    private var folder = ""
    private var socketPath: String { folder + "/ble.sock" }

    override func setUp() {
        var template = Array("/tmp/opencarkey-link-XXXXXX".utf8CString)
        folder = String(cString: mkdtemp(&template)!)
    }

    override func tearDown() { removeTree(folder) }

    private func makeServer(maxConnections: Int = 8) throws -> SimulatedLinkServer {
        var configuration = SimulatedLinkServer.Configuration(socketPath: socketPath)
        configuration.maxConnections = maxConnections
        return try SimulatedLinkServer(configuration: configuration)
    }

    /// Runs loop turns until `count` events arrived (or 2 s passed).
    private func events(_ server: SimulatedLinkServer, count: Int) throws -> [SimulatedLinkServer.Event] {
        var events: [SimulatedLinkServer.Event] = []
        let deadline = SystemClock().nowMillis() + 2000
        while events.count < count, SystemClock().nowMillis() < deadline {
            let set = server.pollSet()
            let ready = try Poll.wait(set, timeoutMillis: 100)
            events += server.process(ready, nowMillis: SystemClock().nowMillis())
        }
        return events
    }

    func testRoundTripOneLinkPerConnection() throws {
        let server = try makeServer()
        defer { server.shutdown() }
        XCTAssertEqual(try Files.mode(of: socketPath), 0o600)
        let phone = try SimulatedLinkClient(socketPath: socketPath, timeoutMillis: 2000)
        try phone.send([0x01, 0x02, 0x03])
        let first = try events(server, count: 2)
        XCTAssertEqual(first, [.connected(LinkID(1)), .message(LinkID(1), [0x01, 0x02, 0x03])])
        XCTAssertNil(server.send([0x7F, 0x01, 0x00, 0x01], to: LinkID(1)))
        XCTAssertEqual(try phone.receive(), [0x7F, 0x01, 0x00, 0x01])

        let second = try SimulatedLinkClient(socketPath: socketPath, timeoutMillis: 2000)
        try second.send([0x05])
        XCTAssertEqual(try events(server, count: 2), [.connected(LinkID(2)), .message(LinkID(2), [0x05])],
                       "a new connection is a new link")
    }

    func testOversizedFrameClosesOnlyThatLink() throws {
        let server = try makeServer()
        defer { server.shutdown() }
        let good = try SimulatedLinkClient(socketPath: socketPath, timeoutMillis: 2000)
        XCTAssertEqual(try events(server, count: 1), [.connected(LinkID(1))])
        let bad = try UnixSocket.connect(path: socketPath)
        defer { bad.close() }
        _ = try bad.sendSome([0x04, 0x01, 0xFF][...])
        XCTAssertEqual(try events(server, count: 2),
                       [.connected(LinkID(2)), .closed(LinkID(2), .malformedFrame(LinkFrameError.oversized(length: 1025, limit: 1024).description))])
        try good.send([0x01])
        XCTAssertEqual(try events(server, count: 1), [.message(LinkID(1), [0x01])])
        XCTAssertEqual(server.links, [LinkID(1)])
    }

    func testConnectionsBeyondTheBoundAreToldBusy() throws {
        let server = try makeServer(maxConnections: 2)
        defer { server.shutdown() }
        let clients = try (0..<2).map { _ in try SimulatedLinkClient(socketPath: socketPath, timeoutMillis: 2000) }
        XCTAssertEqual(try events(server, count: 2).count, 2)
        let third = try SimulatedLinkClient(socketPath: socketPath, timeoutMillis: 2000)
        XCTAssertEqual(try events(server, count: 1), [.refusedBusy])
        XCTAssertEqual(try third.receive(), FaultMessage(.busy).encoded())
        XCTAssertThrowsError(try third.receive()) { XCTAssertEqual($0 as? SimulatedLinkError, .closedByPeer) }
        XCTAssertEqual(server.links.count, 2)
        _ = clients
    }

    /// A phone that hangs up and reconnects at once (both seen in one poll round) gets the slot
    /// it just freed: hang-ups are handled before new connections. Accepting first refused it
    /// busy behind its own closed connection (43 % of visits with 8 phones on 8 slots).
    func testAHangUpFreesItsSlotForAConnectionInTheSameRound() throws {
        let server = try makeServer(maxConnections: 2)
        defer { server.shutdown() }
        var clients: [SimulatedLinkClient?] = try (0..<2).map { _ in try SimulatedLinkClient(socketPath: socketPath, timeoutMillis: 2000) }
        XCTAssertEqual(try events(server, count: 2).count, 2)
        clients[0] = nil
        let next = try SimulatedLinkClient(socketPath: socketPath, timeoutMillis: 2000)
        usleep(50_000) // both the hang-up and the new connection are pending before the round
        let ready = try Poll.wait(server.pollSet(), timeoutMillis: 1000)
        let round = server.process(ready, nowMillis: SystemClock().nowMillis())
        XCTAssertEqual(round, [.closed(LinkID(1), .peerClosed), .connected(LinkID(3))])
        XCTAssertEqual(server.links.count, 2)
        _ = (clients, next)
    }

    func testAPeerThatStopsReadingIsDropped() throws {
        let server = try makeServer()
        defer { server.shutdown() }
        let silent = try UnixSocket.connect(path: socketPath) // never reads
        defer { silent.close() }
        XCTAssertEqual(try events(server, count: 1), [.connected(LinkID(1))])
        var dropped: SimulatedLinkServer.Event?
        var sent = 0
        while dropped == nil, sent < 100_000 {
            dropped = server.send(Bytes(repeating: 7, count: 1024), to: LinkID(1))
            sent += 1
        }
        XCTAssertEqual(dropped, .closed(LinkID(1), .outputOverflow), "after \(sent) frames")
        XCTAssertEqual(server.links, [])
    }

    func testPeerCloseIsReportedAndShutdownRemovesTheSocket() throws {
        let server = try makeServer()
        var phone: SimulatedLinkClient? = try SimulatedLinkClient(socketPath: socketPath, timeoutMillis: 2000)
        XCTAssertEqual(try events(server, count: 1), [.connected(LinkID(1))])
        phone = nil
        XCTAssertEqual(try events(server, count: 1), [.closed(LinkID(1), .peerClosed)])
        _ = phone
        server.shutdown()
        XCTAssertNil(UnixSocket.inode(of: socketPath))
    }

    func testStaleSocketIsReplacedButALiveOneOrAFileIsNot() throws {
        // Stale: bound, then its listener closed without removing the file.
        let stale = try UnixSocket.listen(path: socketPath)
        stale.close()
        let server = try makeServer()
        XCTAssertThrowsError(try makeServer(), "a live listener is never replaced") {
            XCTAssertEqual(($0 as? Errno)?.rawValue, EADDRINUSE)
        }
        server.shutdown()
        try Files.writeAtomically([1], to: socketPath)
        XCTAssertThrowsError(try makeServer(), "a regular file is never deleted")
        XCTAssertEqual(try Files.read(socketPath), [1])
    }

    func testClientTimesOutWhenTheCarIsSilent() throws {
        let server = try makeServer()
        defer { server.shutdown() }
        let phone = try SimulatedLinkClient(socketPath: socketPath, timeoutMillis: 150)
        let start = SystemClock().nowMillis()
        XCTAssertThrowsError(try phone.receive()) { XCTAssertEqual($0 as? SimulatedLinkError, .timedOut(afterMillis: 150)) }
        XCTAssertLessThan(SystemClock().nowMillis() - start, 1500)
    }

    func testSignalBecomesReadable() throws {
        let signals = try SignalPipe.install([SIGUSR2])
        XCTAssertEqual(signals.drain(), [])
        raise(SIGUSR2)
        XCTAssertEqual(try Poll.wait([(signals.descriptor, .readable)], timeoutMillis: 1000), [.readable])
        XCTAssertEqual(signals.drain(), [SIGUSR2])
    }
}

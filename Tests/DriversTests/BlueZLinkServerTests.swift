// BlueZLinkServer with the kernel replaced by sockets, as BlueZ's unit/test-gatt.c does: the
// management channel is one end of an AF_UNIX SOCK_SEQPACKET pair answered by a fake kernel,
// and the ATT listener is an AF_UNIX SOCK_SEQPACKET socket (one PDU per packet, as on L2CAP).
// The phone is the real ATTClientConnection on a connected socket. Time is a ManualClock.
import XCTest
import Glibc
@testable import Drivers
@testable import Protocol

/// Answers every management command with success, as a kernel with a fresh controller would,
/// and records what it was asked.
private final class FakeManagementKernel {
    let descriptor: FileDescriptor
    private(set) var commands: [[UInt8]] = []
    private var settings: MgmtSettings = [.lowEnergy]
    var rssi: Int8 = -60

    init(descriptor: FileDescriptor) { self.descriptor = descriptor }

    /// Answers everything waiting; returns how many commands it answered.
    @discardableResult
    func answer() throws -> Int {
        var count = 0
        while case .data(let sent) = try descriptor.receive(upTo: 1024) {
            commands.append(sent)
            count += 1
            let opcode = UInt16(sent[0]) | UInt16(sent[1]) << 8
            let reply: [UInt8]
            switch opcode {
            case 0x0004: reply = MgmtVectors.controllerInfo(address: MgmtVectors.hci0Address, settings: settings)
            case 0x0005:
                if sent[6] == 1 { settings.insert(.powered) } else { settings.remove(.powered) }
                reply = MgmtVectors.settingsBytes(settings)
            case 0x003E, 0x003F: reply = [1]
            case 0x0031: reply = Array(sent[6..<13]) + [UInt8(bitPattern: rssi), 4, 4]
            case 0x0014: reply = Array(sent[6..<13]) // the link is down: address and type back
            default: reply = MgmtVectors.settingsBytes(settings)
            }
            _ = try descriptor.sendSome(MgmtVectors.complete(opcode, reply)[...])
        }
        return count
    }

    /// Reads what was sent without answering (the server side may be closed already).
    func drain() {
        while case .data(let sent)? = try? descriptor.receive(upTo: 1024), !sent.isEmpty { commands.append(sent) }
    }

    func opcodes(since index: Int = 0) -> [UInt16] {
        commands[index...].map { UInt16($0[0]) | UInt16($0[1]) << 8 }
    }

    /// The Disconnect commands (0x0014) asked for, as hex.
    func disconnects(since index: Int = 0) -> [String] {
        commands[index...].filter { $0.starts(with: [0x14, 0x00]) }.map(bluezHex)
    }
}

/// The phone: an ATT client on a connected SOCK_SEQPACKET socket.
private final class SocketPhone {
    let socket: FileDescriptor
    var client = ATTClientConnection()
    var messages: [Bytes] = []
    /// What the car's accept() reports as the phone's address: a fresh resolvable private one.
    let address: BluetoothAddress

    init(path: String) throws {
        socket = try BlueZLinkServerTests.seqpacket()
        var random = (0..<6).map { _ in UInt8.random(in: 0...255) }
        random[5] = 0x40 | (random[5] & 0x3F)
        self.address = BluetoothAddress(littleEndian: random)!
        try Self.bindAsLEPeer(socket, random)
        var address = sockaddr_un()
        address.sun_family = sa_family_t(AF_UNIX)
        withUnsafeMutableBytes(of: &address.sun_path) { raw in
            for (i, byte) in path.utf8.enumerated() { raw[i] = byte }
        }
        let result = withUnsafePointer(to: &address) {
            $0.withMemoryRebound(to: sockaddr.self, capacity: 1) { connect(socket.rawValue, $0, socklen_t(MemoryLayout<sockaddr_un>.size)) }
        }
        guard result == 0 else { throw Errno.current("connect") }
    }

    deinit { socket.close() }

    /// The car reads the peer of an accepted socket as a sockaddr_l2 (family, PSM, bdaddr, CID,
    /// address type). Bound to an abstract Unix address whose bytes sit where those fields are,
    /// this socket looks to it like an LE random peer at `bytes`: sun_path starts where the PSM
    /// does, and its first byte 0 marks the abstract namespace.
    private static func bindAsLEPeer(_ socket: FileDescriptor, _ bytes: [UInt8]) throws {
        var local = sockaddr_un()
        local.sun_family = sa_family_t(AF_UNIX)
        let path: [UInt8] = [0x00, 0x00] + bytes + [0x04, 0x00, BluetoothAddressType.leRandom.rawValue]
        withUnsafeMutableBytes(of: &local.sun_path) { raw in
            for (i, byte) in path.enumerated() { raw[i] = byte }
        }
        let length = socklen_t(MemoryLayout<sa_family_t>.size + path.count)
        let bound = withUnsafePointer(to: &local) {
            $0.withMemoryRebound(to: sockaddr.self, capacity: 1) { bind(socket.rawValue, $0, length) }
        }
        guard bound == 0 else { throw Errno.current("bind abstract") }
    }

    /// Disconnect 0x0014 for this phone on hci0.
    var disconnectCommand: String { bluezHex([0x14, 0x00, 0x00, 0x00, 0x07, 0x00] + address.bytes + [0x02]) }

    func write(_ pdus: [Bytes]) throws {
        for pdu in pdus { XCTAssertEqual(try socket.sendSome(pdu[...]), pdu.count) }
    }

    /// Reads every PDU the car sent and answers as the client says.
    func read() throws {
        while case .data(let pdu) = try socket.receive(upTo: 2048) {
            let output = try client.receive(pdu)
            messages += output.messages
            try write(output.pdus)
        }
    }
}

final class BlueZLinkServerTests: XCTestCase {
    private var folder = ""
    private var listenPath: String { folder + "/att.sock" }
    private let clock = ManualClock(startMillis: 1_000)
    private let key = try! AdvertisingKey(bytes: Bytes(repeating: 0x42, count: 16))
    private var kernel: FakeManagementKernel!
    private var listenedOn: [BluetoothAddress] = []

    override func setUpWithError() throws {
        folder = "/tmp/carkey-bluez-\(getpid())-\(UInt32.random(in: 0...UInt32.max))"
        XCTAssertEqual(mkdir(folder, 0o700), 0)
    }

    override func tearDown() {
        unlink(listenPath)
        rmdir(folder)
    }

    static func seqpacket() throws -> FileDescriptor {
        let fd = socket(AF_UNIX, Int32(SOCK_SEQPACKET.rawValue) | Int32(SOCK_NONBLOCK.rawValue) | Int32(SOCK_CLOEXEC.rawValue), 0)
        guard fd >= 0 else { throw Errno.current("socket") }
        return FileDescriptor(rawValue: fd)
    }

    private func makeServer(maxLinks: Int = 4) throws -> BlueZLinkServer {
        var fds: [Int32] = [0, 0]
        let type = Int32(SOCK_SEQPACKET.rawValue) | Int32(SOCK_NONBLOCK.rawValue) | Int32(SOCK_CLOEXEC.rawValue)
        guard socketpair(AF_UNIX, type, 0, &fds) == 0 else { throw Errno.current("socketpair") }
        kernel = FakeManagementKernel(descriptor: FileDescriptor(rawValue: fds[1]))
        var configuration = BlueZLinkServer.Configuration(adapter: .index(0), name: "OpenCarKey")
        configuration.maxLinks = maxLinks
        configuration.idleTimeoutMillis = 60_000
        let path = listenPath
        return try BlueZLinkServer(configuration: configuration, advertisingKey: key, rotationMillis: 15 * 60_000,
                                   managementSocket: MgmtSocket(descriptor: FileDescriptor(rawValue: fds[0])),
                                   listen: { [unowned self] address in
                                       listenedOn.append(address)
                                       let fd = try Self.seqpacket()
                                       var local = sockaddr_un()
                                       local.sun_family = sa_family_t(AF_UNIX)
                                       withUnsafeMutableBytes(of: &local.sun_path) { raw in
                                           for (i, byte) in path.utf8.enumerated() { raw[i] = byte }
                                       }
                                       let bound = withUnsafePointer(to: &local) {
                                           $0.withMemoryRebound(to: sockaddr.self, capacity: 1) { bind(fd.rawValue, $0, socklen_t(MemoryLayout<sockaddr_un>.size)) }
                                       }
                                       guard bound == 0, Glibc.listen(fd.rawValue, 4) == 0 else { throw Errno.current("listen") }
                                       return L2CAPListener(descriptor: fd)
                                   }, clock: clock)
    }

    /// One loop round: the kernel answers, then the server serves whatever is ready.
    private func round(_ server: BlueZLinkServer) throws -> [LinkEvent] {
        try kernel.answer()
        let set = server.pollSet()
        let ready = try Poll.wait(set, timeoutMillis: 0)
        return server.process(ready, nowMillis: clock.nowMillis())
    }

    private func rounds(_ server: BlueZLinkServer, _ count: Int = 16, phones: [SocketPhone] = []) throws -> [LinkEvent] {
        var events: [LinkEvent] = []
        for _ in 0..<count {
            events += try round(server)
            for phone in phones { try phone.read() }
        }
        return events
    }

    private func advertisingServer(maxLinks: Int = 4) throws -> BlueZLinkServer {
        let server = try makeServer(maxLinks: maxLinks)
        _ = try rounds(server)
        XCTAssertEqual(kernel.opcodes(), [0x0004, 0x0005, 0x002F, 0x000D, 0x0009, 0x000F, 0x0007, 0x0005, 0x003F, 0x003E],
                       "read info, power off, privacy with an IRK, LE, name, connectable, power on, remove + add advertising")
        XCTAssertEqual(listenedOn, [MgmtVectors.hci0Address], "the ATT listener is bound to the adapter's own address")
        XCTAssertTrue(server.endpointDescription.contains("hci0 00:AA:01:00:00:00, advertising"), server.endpointDescription)
        let notices = server.takeNotices()
        XCTAssertTrue(notices.contains { $0.hasPrefix("advertising on hci0") }, "\(notices)")
        return server
    }

    private func connectedPhone(_ server: BlueZLinkServer) throws -> (SocketPhone, LinkID) {
        let phone = try SocketPhone(path: listenPath)
        let events = try rounds(server, phones: [phone])
        guard case .connected(let link)? = events.first else { throw XCTSkip("no connection event: \(events)") }
        try phone.write(phone.client.start())
        _ = try rounds(server, 12, phones: [phone])
        XCTAssertTrue(phone.client.isReady, "MTU, discovery and subscription over the socket")
        return (phone, link)
    }

    func testAdvertisementCarriesTheRotatingIdentifierThatResolvesWithTheKey() throws {
        let server = try advertisingServer()
        let add = try XCTUnwrap(kernel.commands.last)
        let data = Array(add.dropFirst(6 + 11))
        let parsed = ParsedAdvertisement(structures: try AdvertisingData.parse(data))
        XCTAssertEqual(parsed.serviceUUIDs, [CarAdvertisement.keyServiceUUID])
        let identifier = try XCTUnwrap(parsed.carIdentifier)
        XCTAssertEqual(identifier, server.currentIdentifier)
        XCTAssertTrue(AdvertisingIdentifier.resolve(identifier, key: key))
        XCTAssertFalse(AdvertisingIdentifier.resolve(identifier, key: try AdvertisingKey(bytes: Bytes(repeating: 1, count: 16))))
    }

    func testAPhoneExchangesFragmentedMessagesBothWays() throws {
        let server = try advertisingServer()
        let (phone, link) = try connectedPhone(server)
        let facts = try XCTUnwrap(server.facts(of: link))
        XCTAssertEqual(facts.transport, "ble")
        XCTAssertEqual(facts.mtu, 247)

        let toCar = Bytes((0..<700).map { UInt8($0 & 0xFF) })
        try phone.write(try phone.client.send(message: toCar))
        let received = try rounds(server, 4, phones: [phone])
        XCTAssertEqual(received, [.message(link, toCar)], "three fragments reassembled into one message")

        let toPhone = Bytes((0..<1024).map { UInt8(($0 * 7) & 0xFF) })
        XCTAssertNil(server.send(toPhone, to: link))
        _ = try rounds(server, 4, phones: [phone])
        XCTAssertEqual(phone.messages, [toPhone], "notifications reassembled on the phone")
    }

    func testRSSIComesFromConnectionInformation() throws {
        let server = try advertisingServer()
        let (phone, link) = try connectedPhone(server)
        defer { withExtendedLifetime(phone) {} }
        kernel.rssi = -71
        clock.advance(by: 2_500)
        _ = try rounds(server, 4)
        XCTAssertTrue(kernel.opcodes().contains(0x0031), "Get Connection Information asked")
        XCTAssertEqual(server.facts(of: link)?.rssi, -71)
        kernel.rssi = 127 // "not available", as btvirt says in advertising reports
        clock.advance(by: 2_500)
        _ = try rounds(server, 4)
        XCTAssertNil(server.facts(of: link)?.rssi)
    }

    func testAVanishedPhoneIsClosedByTheIdleTimeoutAndAnotherIsNotBlocked() throws {
        let server = try advertisingServer()
        let (quiet, quietLink) = try connectedPhone(server)
        defer { withExtendedLifetime(quiet) {} }
        let (talker, talkerLink) = try connectedPhone(server)
        clock.advance(by: 59_000)
        try talker.write(try talker.client.send(message: [0x01, 0x02]))
        XCTAssertEqual(try rounds(server, 2, phones: [talker]), [.message(talkerLink, [0x01, 0x02])])
        clock.advance(by: 1_500)
        let count = kernel.commands.count
        let events = try rounds(server, 3, phones: [talker])
        XCTAssertEqual(events, [.closed(quietLink, .idleTimeout(millis: 60_000))])
        XCTAssertEqual(server.links, [talkerLink])
        XCTAssertEqual(kernel.disconnects(since: count), [quiet.disconnectCommand], "the LE connection is ended too")
        XCTAssertEqual(server.nextDeadline().map { $0 <= clock.nowMillis() + 60_000 }, true)
    }

    func testPeerCloseEndsTheLinkAsARoutineClose() throws {
        let server = try advertisingServer()
        var phone: SocketPhone? = try connectedPhone(server).0
        let address = try XCTUnwrap(phone?.address)
        let link = try XCTUnwrap(server.links.first)
        let count = kernel.commands.count
        phone = nil
        XCTAssertNil(phone)
        XCTAssertEqual(try rounds(server, 2), [.closed(link, .peerClosed)])
        XCTAssertTrue(LinkCloseReason.peerClosed.isRoutine)
        XCTAssertEqual(kernel.disconnects(since: count), [], "the phone ended the LE connection itself")
        XCTAssertEqual(server.takeNotices(), ["phone \(address) (LE random) on \(link) disconnected: peer closed"])
    }

    /// What CarService's handshake deadline, busy refusal and slot reclaim call: the LE
    /// connection goes with the ATT channel, so the phone learns at once and the radio is free.
    func testTheCarClosingALinkTerminatesItsLEConnection() throws {
        let server = try advertisingServer()
        let (phone, link) = try connectedPhone(server)
        let facts = try XCTUnwrap(server.facts(of: link))
        XCTAssertEqual(facts.peerAddress, "\(phone.address) (LE random)")
        let count = kernel.commands.count
        server.close(link)
        XCTAssertEqual(try rounds(server, 2), [], "no event for a link the caller closed")
        XCTAssertEqual(kernel.disconnects(since: count), [phone.disconnectCommand])
        XCTAssertEqual(try phone.socket.receive(upTo: 64), .closed)
        XCTAssertEqual(server.takeNotices(),
                       ["phone \(phone.address) (LE random) on \(link) disconnected by the car (HCI reason 0x13, remote user terminated)"])
    }

    func testAPhoneThatDoesNotSubscribeIsDisconnectedWhenTheBacklogIsFull() throws {
        let server = try advertisingServer()
        let phone = try SocketPhone(path: listenPath)
        guard case .connected(let link)? = try rounds(server).first else { return XCTFail("no connection") }
        let count = kernel.commands.count
        for _ in 0..<ATTServerConnection.maxQueuedMessages { XCTAssertNil(server.send([0x01], to: link)) }
        XCTAssertEqual(server.send([0x01], to: link), .closed(link, .outputOverflow))
        _ = try rounds(server, 2)
        XCTAssertEqual(kernel.disconnects(since: count), [phone.disconnectCommand])
    }

    func testOneMoreThanMaxLinksIsDisconnected() throws {
        let server = try advertisingServer(maxLinks: 1)
        let (first, _) = try connectedPhone(server)
        defer { withExtendedLifetime(first) {} }
        let count = kernel.commands.count
        let extra = try SocketPhone(path: listenPath)
        XCTAssertEqual(try rounds(server, 2), [.refusedBusy])
        XCTAssertEqual(try extra.socket.receive(upTo: 64), .closed, "the extra phone is hung up on")
        _ = try rounds(server, 2)
        XCTAssertEqual(kernel.disconnects(since: count), [extra.disconnectCommand])
        XCTAssertEqual(server.takeNotices(), ["phone \(extra.address) (LE random) on a connection refused busy disconnected by the car "
                                              + "(HCI reason 0x13, remote user terminated)"])
    }

    func testABrokenFragmentClosesOnlyThatLink() throws {
        let server = try advertisingServer()
        let (bad, badLink) = try connectedPhone(server)
        let (good, goodLink) = try connectedPhone(server)
        let count = kernel.commands.count
        // A continuation without a START fragment: the stream cannot be trusted to be in step.
        try bad.write([ATTPDU.writeCommand(handle: GATTDatabase.CarHandles.phoneToCar, value: [0x01, 0xAA])])
        try good.write(try good.client.send(message: [0x7F]))
        let events = try rounds(server, 2, phones: [good])
        XCTAssertTrue(events.contains(.message(goodLink, [0x7F])), "\(events)")
        XCTAssertTrue(events.contains { if case .closed(badLink, .malformedFrame) = $0 { return true } else { return false } }, "\(events)")
        XCTAssertEqual(kernel.disconnects(since: count), [bad.disconnectCommand], "only the broken link's LE connection")
    }

    func testRotationRemovesAndReAddsTheInstanceWithANewIdentifier() throws {
        let server = try advertisingServer()
        let before = server.currentIdentifier
        let count = kernel.commands.count
        clock.advance(by: 15 * 60_000)
        _ = try rounds(server, 4)
        XCTAssertEqual(kernel.opcodes(since: count), [0x003F, 0x003E], "remove then add: a new instance, a new private address")
        XCTAssertNotEqual(server.currentIdentifier, before)
        XCTAssertTrue(AdvertisingIdentifier.resolve(server.currentIdentifier, key: key))
    }

    /// The kernel keeps a management advertising instance after its socket closes: a stopped
    /// agent must take it down, or phones keep connecting to a car nobody serves.
    func testShutdownWithdrawsTheAdvertisingAndIsIdempotent() throws {
        let server = try advertisingServer()
        let count = kernel.commands.count
        server.shutdown()
        server.shutdown()
        XCTAssertTrue(server.links.isEmpty)
        kernel.drain()
        XCTAssertEqual(kernel.opcodes(since: count), [0x003F], "one Remove Advertising, however often shutdown is called")
        XCTAssertEqual(kernel.commands.last.map { Array($0[2...]) }, [0, 0, 1, 0, 1], "hci0, instance 1")
    }
}

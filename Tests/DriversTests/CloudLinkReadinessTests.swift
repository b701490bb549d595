// CloudLink driven by readiness, as CloudService runs it: the outbox is read after a
// (re)connect, after outboxChanged(), and while messages held back by the window wait for room;
// never on an idle pass. Deadlines come from the state (reconnect time, CONNACK timeout).
import XCTest
@testable import Drivers

/// Counts the link's outbox reads.
final class CountingOutbox: OutboxStore {
    let inner = MemoryOutbox()
    var reads = 0
    func pending(afterID: Int64, limit: Int) throws -> [OutboxMessage] {
        reads += 1
        return try inner.pending(afterID: afterID, limit: limit)
    }
    func acknowledge(id: Int64) throws { try inner.acknowledge(id: id) }
    func recordRefusal(id: Int64, reasonCode: Int32, atMillis: UInt64) throws { try inner.recordRefusal(id: id, reasonCode: reasonCode, atMillis: atMillis) }
    func releaseRefusals() throws { try inner.releaseRefusals() }
    func depth() throws -> Int { try inner.depth() }
}

final class CloudLinkReadinessTests: XCTestCase {
    private func makeLink(_ transport: ScriptedTransport, _ outbox: CountingOutbox, window: Int = 32) -> CloudLink {
        CloudLink(settings: CloudLinkSettings(vehicleID: "V", window: window), transport: transport, outbox: outbox,
                  nextBirthSequence: { 1 }, unitRandom: { 0 })
    }

    private func payloads(_ transport: ScriptedTransport) -> [String] {
        transport.published.filter { $0.topic.hasSuffix("/events") }.map { String(decoding: $0.payload, as: UTF8.self) }
    }

    private func connect(_ link: CloudLink, _ transport: ScriptedTransport) {
        _ = link.step(nowMillis: 0, readable: false, writable: false)
        transport.queuedEvents = [.connected(sessionPresent: false)]
        _ = link.step(nowMillis: 10, readable: true, writable: false)
    }

    func testAnIdleLinkDoesNotReadTheOutboxUntilToldOfNewRows() {
        let transport = ScriptedTransport()
        let outbox = CountingOutbox()
        outbox.inner.enqueue(topic: "vehicles/V/events", payload: "a")
        let link = makeLink(transport, outbox)
        connect(link, transport)
        XCTAssertEqual(payloads(transport), ["a"])
        XCTAssertEqual(outbox.reads, 1, "read once on connect")
        for now in stride(from: UInt64(20), to: 60_000, by: 1000) { _ = link.step(nowMillis: now, readable: false, writable: false) }
        XCTAssertEqual(outbox.reads, 1, "idle passes do not touch the outbox")

        outbox.inner.enqueue(topic: "vehicles/V/events", payload: "b")
        _ = link.step(nowMillis: 60_000, readable: false, writable: false)
        XCTAssertEqual(payloads(transport), ["a"], "not told: not read")
        link.outboxChanged()
        _ = link.step(nowMillis: 60_010, readable: false, writable: false)
        XCTAssertEqual(payloads(transport), ["a", "b"])
        XCTAssertEqual(outbox.reads, 2)
        XCTAssertFalse(link.outboxDirty)
    }

    func testMessagesHeldBackByTheWindowFollowWhenAcknowledgementsFreeRoom() {
        let transport = ScriptedTransport()
        let outbox = CountingOutbox()
        for i in 1...10 { outbox.inner.enqueue(topic: "vehicles/V/events", payload: "m\(i)") }
        let link = makeLink(transport, outbox, window: 4)
        connect(link, transport)
        XCTAssertEqual(payloads(transport).count, 4, "the window is full")
        XCTAssertTrue(link.outboxDirty, "more are waiting")
        var now: UInt64 = 20
        // Acknowledge everything in flight each round (message IDs: 1 was the birth).
        while payloads(transport).count < 10 && now < 1000 {
            let inFlight = transport.published.indices.dropFirst(transport.published.count - link.inFlightCount)
            transport.queuedEvents = inFlight.map { .published(messageID: Int32($0 + 1), reasonCode: 0) }
            _ = link.step(nowMillis: now, readable: true, writable: false)
            now += 10
        }
        XCTAssertEqual(payloads(transport), (1...10).map { "m\($0)" }, "all, in order")
        let reads = outbox.reads
        transport.queuedEvents = [.published(messageID: Int32(transport.published.count), reasonCode: 0)]
        _ = link.step(nowMillis: now, readable: true, writable: false)
        for later in stride(from: now + 10, to: now + 10_000, by: 500) { _ = link.step(nowMillis: later, readable: false, writable: false) }
        XCTAssertFalse(link.outboxDirty)
        XCTAssertLessThanOrEqual(outbox.reads, reads + 1, "drained: no more reads while idle")
    }

    func testDeadlinesFollowTheConnectionState() {
        let transport = ScriptedTransport()
        transport.connectError = MQTTError.library(operation: "", code: 14, message: "Lookup error")
        let link = makeLink(transport, CountingOutbox())
        XCTAssertEqual(link.nextDeadline(), 0, "connect at once")
        _ = link.step(nowMillis: 100, readable: false, writable: false)
        XCTAssertEqual(link.nextDeadline(), 2_100, "the backoff's first retry")
        transport.connectError = nil
        _ = link.step(nowMillis: 2_100, readable: false, writable: false)
        XCTAssertEqual(link.nextDeadline(), 2_100 + link.connectTimeoutMillis, "the CONNACK timeout")
        transport.queuedEvents = [.connected(sessionPresent: false)]
        _ = link.step(nowMillis: 2_200, readable: true, writable: false)
        XCTAssertNil(link.nextDeadline(), "connected, and this transport has no keepalive of its own: only readiness")
        XCTAssertNil(link.pollRequest, "the scripted transport has no socket")
    }

    func testTheSocketIsPolledOnlyWhileConnectingOrConnected() throws {
        let transport = SocketTransport()
        let link = CloudLink(settings: CloudLinkSettings(vehicleID: "V"), transport: transport, outbox: CountingOutbox(),
                             nextBirthSequence: { 1 }, unitRandom: { 0 })
        XCTAssertNil(link.pollRequest, "waiting for the first connect")
        _ = link.step(nowMillis: 0, readable: false, writable: false)
        XCTAssertEqual(link.pollRequest?.0, transport.socket.descriptor)
        XCTAssertEqual(link.pollRequest?.1, [.readable], "nothing queued: readable only")
        transport.wantsWrite = true
        XCTAssertEqual(link.pollRequest?.1, [.readable, .writable])
        // No CONNACK: the link waits to retry while libmosquitto still holds the socket open;
        // polling it then would spin on bytes nobody reads.
        _ = link.step(nowMillis: link.connectTimeoutMillis, readable: false, writable: false)
        guard case .waiting = link.state else { return XCTFail("\(link.state)") }
        XCTAssertNil(link.pollRequest)
    }
}

/// A transport with a socket-like descriptor and nothing behind it.
final class SocketTransport: MQTTTransport {
    let socket = try! EventCounter()
    var wantsWrite = false
    var socketDescriptor: FileDescriptor? { socket.descriptor }
    func setWill(_ will: MQTTWill) throws(MQTTError) {}
    func connect() throws(MQTTError) {}
    func service(timeoutMillis: Int32) -> (events: [MQTTEvent], error: MQTTError?) { ([], nil) }
    func publish(_ message: MQTTPublish) throws(MQTTError) -> Int32 { 1 }
    func subscribe(_ topicFilter: String, qos: MQTTQoS) throws(MQTTError) {}
    func disconnect() {}
}

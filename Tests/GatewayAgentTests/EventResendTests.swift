// The cloud's `resendEvents` request (docs/cloud.md, "Inbound envelope"): the body's bytes,
// every refusal answered with nothing queued, an accepted one queuing held events exactly as
// first published (pruned ones skipped), and the rate limit on the injected monotonic clock.
// The AgentCloud is built but never started: no broker, the outbox is read directly.
import XCTest
import Drivers
import Protocol
@testable import carkey_agent

final class EventResendTests: XCTestCase {
    private var folder = ""
    private var store: CarStore!
    private var outbox: SQLiteOutbox!
    private var cloud: AgentCloud!
    private var gate: InboundGate!
    private var resend: EventResend!
    private let monotonic = ManualClock(startMillis: 5_000_000)
    private let topics = CloudTopics(vehicleID: "OCK-UNIT-0015")

    override func setUpWithError() throws {
        folder = AgentTestSupport.temporaryDirectory()
        store = try CarStore.open(stateDirectory: folder + "/state")
        outbox = SQLiteOutbox(store: store)
        let clock = AgentClock(monotonic: monotonic, systemSynchronized: { false })
        let log = AgentLog(prefix: "test")
        let options = CloudOptions(endpoint: MQTTEndpoint(host: "127.0.0.1", port: 9, usesTLS: false), tls: nil,
                                   keepaliveSeconds: 30, willDelaySeconds: 10)
        // Installs the events router on the store, as the agent does.
        cloud = try AgentCloud(options: options, vehicleID: try VehicleID(topics.vehicleID), store: store, clock: clock, log: log)
        gate = InboundGate(topics: topics, store: store)
        resend = EventResend(cloud: cloud, router: EventPayload.router(topics), clock: clock, log: log)
    }

    override func tearDown() {
        cloud = nil
        store = nil
        AgentTestSupport.removeTree(folder)
    }

    // MARK: Helpers

    /// Appends `count` events and returns their outbox rows as first queued.
    private func appendEvents(_ count: Int) throws -> [OutboxMessage] {
        for index in 0..<count {
            try store.appendEvent(NewEvent(kind: .storage, time: EventTime(seconds: 1_800_000_000 + Int64(index), trusted: true),
                                           action: EventAction(unlisted: "test \(index)"), result: "ok"))
        }
        return try eventRows()
    }

    private func eventRows() throws -> [OutboxMessage] {
        try outbox.pending(afterID: 0, limit: 10_000).filter { $0.topic == topics.events }
    }

    private func resultRows() throws -> [OutboxMessage] {
        try outbox.pending(afterID: 0, limit: 10_000).filter { $0.topic == topics.results }
    }

    /// The broker acknowledged everything waiting: the outbox is empty, the events published.
    private func acknowledgeAll() throws {
        for message in try outbox.pending(afterID: 0, limit: 10_000) { try outbox.acknowledge(id: message.id) }
        try outbox.flushAcknowledgements()
        XCTAssertEqual(try outbox.depth(), 0)
    }

    /// Sends a request through the gate (which must admit it) and the handler; returns its ID.
    @discardableResult
    private func request(body: Bytes) throws -> String {
        let id = try UUIDv4.make()
        let payload = JSONValue.object([("id", .string(id)), ("type", .string("resendEvents")), ("body", .string(body.hexString))]).bytes
        guard case .success(let envelope) = gate.admit(MQTTInbound(topic: topics.commands, payload: payload)) else {
            XCTFail("the gate refused a resendEvents envelope: \(gate.counters)")
            return id
        }
        resend.handle(envelope)
        return id
    }

    private func request(_ from: UInt64, _ to: UInt64) throws -> String {
        try request(body: EventResendRange(fromSeq: from, toSeq: to).body)
    }

    /// The answer to `id` on the results topic, parsed.
    private func answer(_ id: String) throws -> [String: JSONTree] {
        for row in try resultRows() {
            guard case .object(let fields) = try JSONTree.parse(row.payload) else { continue }
            if fields["request"]?.stringValue == id { return fields }
        }
        XCTFail("no result for \(id)")
        return [:]
    }

    // MARK: Tests

    func testBodyIsFromSeqThenToSeqBigEndian() throws {
        let range = EventResendRange(fromSeq: 0x0102, toSeq: 0x0000_0001_0000_0003)
        XCTAssertEqual(range.body.hexString, "0000000000000102" + "0000000100000003")
        XCTAssertEqual(EventResendRange(body: Bytes(hex: "00000000000000070000000000000009")!),
                       EventResendRange(fromSeq: 7, toSeq: 9))
        XCTAssertNil(EventResendRange(body: Bytes(repeating: 0, count: 15)))
        XCTAssertNil(EventResendRange(body: Bytes(repeating: 0, count: 17)))
    }

    func testEveryRefusalIsAnsweredAndQueuesNothing() throws {
        _ = try appendEvents(3)
        try acknowledgeAll()
        let cases: [(Bytes, String, String)] = [
            (Bytes(repeating: 0, count: 15), "bodyLength", "malformedMessage"),
            (Bytes(repeating: 0, count: 17), "bodyLength", "malformedMessage"),
            (EventResendRange(fromSeq: 0, toSeq: 2).body, "range", "malformedMessage"),
            (EventResendRange(fromSeq: 3, toSeq: 2).body, "range", "malformedMessage"),
            (EventResendRange(fromSeq: 1, toSeq: UInt64.max).body, "range", "malformedMessage"),
            (EventResendRange(fromSeq: 1, toSeq: 501).body, "rangeTooLarge", "malformedMessage"),
        ]
        for (body, reason, fault) in cases {
            let id = try request(body: body)
            XCTAssertEqual(try eventRows().count, 0, "\(reason): nothing queued")
            let fields = try answer(id)
            XCTAssertEqual(fields["type"]?.stringValue, "resendEvents")
            XCTAssertEqual(fields["result"]?.stringValue, "refused", reason)
            XCTAssertEqual(fields["reason"]?.stringValue, reason)
            guard case .object(let faultFields)? = fields["fault"] else { return XCTFail("\(reason): no fault") }
            XCTAssertEqual(faultFields["name"]?.stringValue, fault)
        }
        XCTAssertEqual(try outbox.depth(), cases.count, "only the answers are queued")
        // 500 is the largest range accepted.
        let id = try request(1, 500)
        XCTAssertEqual(try answer(id)["result"]?.stringValue, "ok")
    }

    func testAcceptedRequestQueuesHeldEventsAsFirstPublishedAndSkipsPrunedOnes() throws {
        let original = try appendEvents(10)
        XCTAssertEqual(original.map(\.sequence), Array(1...10))
        try acknowledgeAll()
        XCTAssertEqual(try store.trimEvents(keepingLatest: 6), 4, "events 1 to 4 pruned from the log")

        let id = try request(3, 8)
        let fields = try answer(id)
        XCTAssertEqual(fields["result"]?.stringValue, "ok")
        XCTAssertEqual(fields["count"], .integer(4))
        XCTAssertEqual(fields["fromSeq"], .integer(3))
        XCTAssertEqual(fields["toSeq"], .integer(8))
        XCTAssertEqual(fields["fault"], .null)
        let resent = try eventRows()
        XCTAssertEqual(resent.map(\.sequence), [5, 6, 7, 8], "held rows in range only, pruned 3 and 4 skipped")
        for row in resent {
            let first = try XCTUnwrap(original.first { $0.sequence == row.sequence })
            XCTAssertEqual(row.uuid, first.uuid, "same UUID: the back end de-duplicates")
            XCTAssertEqual(row.payload, first.payload, "byte for byte")
            XCTAssertEqual(row.qos, first.qos)
            XCTAssertEqual(row.priority, first.priority)
            XCTAssertEqual(row.retain, first.retain)
            XCTAssertEqual(row.topic, first.topic)
        }
    }

    func testAnEventStillWaitingIsQueuedOnceNotTwice() throws {
        let original = try appendEvents(3)
        let id = try request(1, 3)
        XCTAssertEqual(try answer(id)["count"], .integer(3))
        let rows = try eventRows()
        XCTAssertEqual(rows.map(\.uuid), original.map(\.uuid), "one row per event (the UUID is unique in the outbox)")
        XCTAssertTrue(rows.map(\.id).min()! > original.map(\.id).max()!, "the rows were replaced at the back")
    }

    /// docs/cloud.md's rate-limited answer, field for field (its id, seq, time and request differ).
    func testTheDocumentedRefusal() throws {
        let doc = try String(contentsOfFile: #filePath.components(separatedBy: "/Tests/")[0] + "/docs/cloud.md", encoding: .utf8)
        let line = try XCTUnwrap(doc.split(separator: "\n").first { $0.hasPrefix("{") && $0.contains(#""type":"resendEvents""#) },
                                 "docs/cloud.md has no resendEvents refusal example")
        guard case .object(let example) = try JSONTree.parse(Bytes(line.utf8)) else { return XCTFail("not an object: \(line)") }
        _ = try appendEvents(2)
        try acknowledgeAll()
        XCTAssertEqual(try answer(try request(1, 2))["result"]?.stringValue, "ok")
        let limited = try answer(try request(141, 150))
        XCTAssertEqual(Set(limited.keys), Set(example.keys), "the same members")
        for name in ["type", "result", "fault", "reason", "fromSeq", "toSeq"] {
            XCTAssertEqual(limited[name], example[name], name)
        }
    }

    func testOneAcceptedRequestPerTenSecondsOnTheMonotonicClock() throws {
        _ = try appendEvents(4)
        try acknowledgeAll()
        XCTAssertEqual(try answer(try request(1, 2))["result"]?.stringValue, "ok")
        XCTAssertEqual(try eventRows().count, 2)

        monotonic.advance(by: 9_999)
        let limited = try answer(try request(3, 4))
        XCTAssertEqual(limited["result"]?.stringValue, "refused")
        XCTAssertEqual(limited["reason"]?.stringValue, "rateLimited")
        guard case .object(let fault)? = limited["fault"] else { return XCTFail("no fault") }
        XCTAssertEqual(fault["name"]?.stringValue, "rateLimited")
        XCTAssertEqual(try eventRows().count, 2, "a rate-limited request queues nothing")

        // A refused request does not restart the window.
        monotonic.advance(by: 1)
        XCTAssertEqual(try answer(try request(3, 4))["result"]?.stringValue, "ok")
        XCTAssertEqual(try eventRows().map(\.sequence), [1, 2, 3, 4])
    }
}

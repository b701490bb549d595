// The cloud link against a real mosquitto broker on loopback.
import XCTest
@testable import Drivers
import TestHarness

final class CloudLinkBrokerTests: XCTestCase {
    private func makeLink(_ broker: MosquittoBroker, outbox: MemoryOutbox, vehicle: String = "VIN1") throws -> (CloudLink, MosquittoTransport) {
        let transport = try MosquittoTransport(options: MQTTConnectOptions(endpoint: MQTTEndpoint(url: broker.url), clientID: "car-\(vehicle)",
                                                                           keepaliveSeconds: 5))
        var birth: UInt64 = 0
        // Fast retries for tests; the real schedule (2 s to 60 s) is unit-tested separately.
        let link = CloudLink(settings: CloudLinkSettings(vehicleID: vehicle), transport: transport, outbox: outbox,
                             nextBirthSequence: { birth += 1; return birth }, unitRandom: { 0 },
                             backoff: ReconnectBackoff(baseMillis: 50, capMillis: 400))
        return (link, transport)
    }

    func testPublishedWhileBrokerDownArrivesInOrderOnceItStarts() throws {
        let broker = try MosquittoBroker()
        let outbox = MemoryOutbox()
        for i in 1...50 { outbox.enqueue(topic: "vehicles/VIN1/events", payload: "{\"seq\":\(i)}", sequence: Int64(i)) }
        let (link, _) = try makeLink(broker, outbox: outbox)
        // Broker down: the connect fails and a retry is scheduled, nothing is lost.
        let failed = link.step(nowMillis: monotonicMillis())
        XCTAssertTrue(failed.contains { if case .connectFailed = $0 { return true } else { return false } }, "\(failed)")
        XCTAssertEqual(try outbox.depth(), 50)

        try broker.start()
        let subscriber = try TestSubscriber(url: broker.url, filter: "vehicles/VIN1/events")
        // Skip the backoff wait: the test drives time.
        _ = runUntil(link, subscriber: subscriber) { subscriber.received.count >= 50 && outbox.messages.isEmpty }
        XCTAssertEqual(subscriber.received.map { String(decoding: $0.payload, as: UTF8.self) }, (1...50).map { "{\"seq\":\($0)}" })
        XCTAssertEqual(try outbox.depth(), 0, "acknowledged messages leave the outbox")
        XCTAssertEqual(subscriber.received.first?.userProperties.first { $0.name == "uuid" }?.value, "uuid-1")
        XCTAssertEqual(subscriber.received.first?.userProperties.first { $0.name == "seq" }?.value, "1")
    }

    func testBrokerRefusalByACLKeepsTheMessageQueuedAndReportsIt() throws {
        // Anonymous clients may write presence and state, not events.
        let broker = try MosquittoBroker(aclRules: "topic readwrite vehicles/VIN1/status\ntopic readwrite vehicles/VIN1/state")
        try broker.start()
        let outbox = MemoryOutbox()
        outbox.enqueue(topic: "vehicles/VIN1/events", payload: "denied")
        outbox.enqueue(topic: "vehicles/VIN1/state", payload: "allowed")
        let (link, _) = try makeLink(broker, outbox: outbox)
        let reports = runUntil(link, subscriber: nil) { outbox.refused.count == 1 && outbox.messages.count == 1 }
        XCTAssertEqual(outbox.messages.map(\.topic), ["vehicles/VIN1/events"], "the refused message stays, the allowed one is gone")
        XCTAssertEqual(outbox.refused[1], 0x87, "not authorized")
        XCTAssertTrue(reports.contains(.refused(outboxID: 1, topic: "vehicles/VIN1/events", reasonCode: 0x87)), "\(reports)")
        XCTAssertNotNil(link.lastError)
    }

    func testBirthMessageIsRetainedWithIncreasingSequence() throws {
        let broker = try MosquittoBroker()
        try broker.start()
        let outbox = MemoryOutbox()
        let (link, _) = try makeLink(broker, outbox: outbox)
        _ = runUntil(link, subscriber: nil) { link.state == .connected }
        XCTAssertEqual(link.birth, 1)
        // A late subscriber sees the retained birth.
        let subscriber = try TestSubscriber(url: broker.url, filter: "vehicles/VIN1/status")
        _ = runUntil(link, subscriber: subscriber, seconds: 3) { !subscriber.received.isEmpty }
        XCTAssertEqual(subscriber.received.last.map { String(decoding: $0.payload, as: UTF8.self) }, #"{"state":"online","birth":1}"#)
        // A clean stop replaces it with offline.
        link.stop(clock: monotonicMillis)
        let later = try TestSubscriber(url: broker.url, filter: "vehicles/VIN1/status")
        let deadline = monotonicMillis() + 3000
        while later.received.isEmpty && monotonicMillis() < deadline { later.poll() }
        XCTAssertEqual(later.received.last.map { String(decoding: $0.payload, as: UTF8.self) }, #"{"state":"offline","birth":1}"#)
    }

    func testBrokerRestartsWhileEventsFlowLoseNothing() throws {
        let broker = try MosquittoBroker()
        try broker.start()
        let outbox = MemoryOutbox()
        let (link, _) = try makeLink(broker, outbox: outbox)
        let subscriber = try TestSubscriber(url: broker.url, filter: "vehicles/VIN1/events", clientID: "restart-subscriber", persistent: true)
        var next = 1
        for _ in 0..<4 {
            for _ in 0..<25 {
                outbox.enqueue(topic: "vehicles/VIN1/events", payload: "\(next)", sequence: Int64(next))
                next += 1
            }
            // Let part of the batch through, then restart the broker under the flow.
            _ = runUntil(link, subscriber: subscriber, seconds: 2) { outbox.messages.count < 12 }
            broker.stop(signal: SIGTERM)
            for _ in 0..<3 { _ = link.step(nowMillis: monotonicMillis(), serviceMillis: 10) }
            try broker.start()
        }
        let total = next - 1
        _ = runUntil(link, subscriber: subscriber, seconds: 30) {
            outbox.messages.isEmpty && Set(subscriber.received.map { String(decoding: $0.payload, as: UTF8.self) }).count == total
        }
        XCTAssertEqual(try outbox.depth(), 0, "every message was acknowledged")
        let payloads = subscriber.received.map { Int(String(decoding: $0.payload, as: UTF8.self)) ?? -1 }
        XCTAssertEqual(Set(payloads), Set(1...total), "nothing lost across \(4) broker restarts")
        // At-least-once: duplicates are allowed, but the first arrival of each is in order.
        var seen = Set<Int>(), firstArrivals: [Int] = []
        for value in payloads where seen.insert(value).inserted { firstArrivals.append(value) }
        XCTAssertEqual(firstArrivals, Array(1...total))
        print("broker-restart test: \(total) events, \(payloads.count - total) duplicates")
    }
}

// An in-memory outbox and a subscriber for cloud-link tests.
import XCTest
@testable import Drivers
#if canImport(Glibc)
import Glibc
#endif

final class MemoryOutbox: OutboxStore {
    var messages: [OutboxMessage] = []
    var refused: [Int64: Int32] = [:]
    private var nextID: Int64 = 1

    func enqueue(topic: String, payload: String, qos: Int32 = 1, sequence: Int64 = 0, retain: Bool = false) {
        messages.append(OutboxMessage(id: nextID, uuid: "uuid-\(nextID)", topic: topic, payload: Array(payload.utf8), qos: qos,
                                      retain: retain, priority: .event, sequence: sequence))
        nextID += 1
    }

    func pending(afterID: Int64, limit: Int) throws -> [OutboxMessage] {
        var heldTopics = Set(messages.filter { refused[$0.id] != nil }.map(\.topic))
        var out: [OutboxMessage] = []
        for message in messages where message.id > afterID && out.count < limit {
            if refused[message.id] != nil { continue }
            if heldTopics.contains(message.topic) { continue }
            out.append(message)
        }
        heldTopics.removeAll()
        return out
    }
    func acknowledge(id: Int64) throws { messages.removeAll { $0.id == id } }
    func recordRefusal(id: Int64, reasonCode: Int32, atMillis: UInt64) throws { refused[id] = reasonCode }
    func releaseRefusals() throws { refused.removeAll() }
    func depth() throws -> Int { messages.count }
}

func monotonicMillis() -> UInt64 {
    var ts = timespec()
    clock_gettime(CLOCK_MONOTONIC, &ts)
    return UInt64(ts.tv_sec) * 1000 + UInt64(ts.tv_nsec) / 1_000_000
}

/// A v5 subscriber on its own transport, serviced by the test thread.
final class TestSubscriber {
    let transport: MosquittoTransport
    let filter: String
    var received: [MQTTInbound] = []
    private var lastAttempt: UInt64 = 0

    /// `persistent`: a session that outlives disconnects, so a broker restart loses nothing.
    init(url: String, filter: String, clientID: String = "test-subscriber-\(getpid())-\(UInt32.random(in: 0...UInt32.max))",
         persistent: Bool = false) throws {
        self.filter = filter
        transport = try MosquittoTransport(options: MQTTConnectOptions(endpoint: MQTTEndpoint(url: url), clientID: clientID,
                                                                       sessionExpirySeconds: persistent ? 3600 : 0))
        try transport.connect()
        var connected = false
        let deadline = monotonicMillis() + 5000
        while !connected && monotonicMillis() < deadline {
            connected = transport.service(timeoutMillis: 50).events.contains(.connected(sessionPresent: false))
        }
        guard connected else { throw MQTTError.notConnected(clientID: clientID) }
        try transport.subscribe(filter, qos: .atLeastOnce)
        _ = transport.service(timeoutMillis: 100)
    }

    /// Services the connection; after a broker restart it reconnects (at most every 200 ms).
    func poll(millis: Int32 = 20) {
        let (events, error) = transport.service(timeoutMillis: millis)
        for event in events {
            if case .message(let message) = event { received.append(message) }
            if case .connected = event { try? transport.subscribe(filter, qos: .atLeastOnce) }
        }
        if error != nil, monotonicMillis() > lastAttempt + 200 {
            lastAttempt = monotonicMillis()
            try? transport.connect()
        }
    }
}

/// Steps `link` and the subscriber until `done` or the deadline (real time, bounded).
func runUntil(_ link: CloudLink, subscriber: TestSubscriber?, seconds: UInt64 = 10, _ done: () -> Bool) -> [CloudLinkReport] {
    var reports: [CloudLinkReport] = []
    let deadline = monotonicMillis() + seconds * 1000
    while !done() && monotonicMillis() < deadline {
        reports += link.step(nowMillis: monotonicMillis(), serviceMillis: 10)
        subscriber?.poll(millis: 5)
    }
    return reports
}

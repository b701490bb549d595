// CloudLink's supervision logic with a scripted transport: virtual time, no broker.
import XCTest
@testable import Drivers

/// A transport whose answers the test scripts.
final class ScriptedTransport: MQTTTransport {
    var connectError: MQTTError?
    var queuedEvents: [MQTTEvent] = []
    var serviceError: MQTTError?
    var wills: [MQTTWill] = []
    var published: [MQTTPublish] = []
    var connects = 0
    var disconnects = 0
    private var nextMessageID: Int32 = 1

    func setWill(_ will: MQTTWill) throws(MQTTError) { wills.append(will) }
    func connect() throws(MQTTError) {
        connects += 1
        if let connectError { throw connectError }
    }
    func service(timeoutMillis: Int32) -> (events: [MQTTEvent], error: MQTTError?) {
        defer { queuedEvents.removeAll(); serviceError = nil }
        return (queuedEvents, serviceError)
    }
    func publish(_ message: MQTTPublish) throws(MQTTError) -> Int32 {
        published.append(message)
        defer { nextMessageID += 1 }
        return nextMessageID
    }
    var subscriptions: [String] = []
    func subscribe(_ topicFilter: String, qos: MQTTQoS) throws(MQTTError) { subscriptions.append(topicFilter) }
    func disconnect() { disconnects += 1 }
}

final class CloudLinkLogicTests: XCTestCase {
    private var births: UInt64 = 0

    private func makeLink(_ transport: ScriptedTransport, _ outbox: MemoryOutbox) -> CloudLink {
        CloudLink(settings: CloudLinkSettings(vehicleID: "V"), transport: transport, outbox: outbox,
                  nextBirthSequence: { [unowned self] in births += 1; return births }, unitRandom: { 0 })
    }

    func testFailedConnectsFollowTheBackoffScheduleAndNeverStop() {
        let transport = ScriptedTransport()
        transport.connectError = MQTTError.library(operation: "", code: 14, message: "Lookup error")  // DNS failure
        let link = makeLink(transport, MemoryOutbox())
        var now: UInt64 = 0
        var attemptTimes: [UInt64] = []
        while now < 400_000 {
            let before = transport.connects
            _ = link.step(nowMillis: now)
            if transport.connects > before { attemptTimes.append(now) }
            now += 500
        }
        let gaps = zip(attemptTimes.dropFirst(), attemptTimes).map { $0 - $1 }
        XCTAssertEqual(Array(gaps.prefix(7)), [2_000, 4_000, 8_000, 16_000, 32_000, 60_000, 60_000])
        XCTAssertGreaterThan(transport.connects, 9, "it keeps trying")
        XCTAssertEqual(link.lastError?.contains("Lookup error"), true)
    }

    func testEachConnectCarriesANewBirthInTheWill() {
        let transport = ScriptedTransport()
        transport.connectError = MQTTError.library(operation: "", code: 7, message: "refused")
        let link = makeLink(transport, MemoryOutbox())
        _ = link.step(nowMillis: 0)
        _ = link.step(nowMillis: 10_000)
        XCTAssertEqual(transport.wills.map { String(decoding: $0.payload, as: UTF8.self) },
                       [#"{"state":"lost","birth":1}"#, #"{"state":"lost","birth":2}"#])
        XCTAssertTrue(transport.wills.allSatisfy { $0.retain && $0.qos == .atLeastOnce && $0.topic == "vehicles/V/status" && $0.delaySeconds == 10 })
    }

    func testConnackResetsBackoffAndPublishesRetainedBirth() {
        let transport = ScriptedTransport()
        let link = makeLink(transport, MemoryOutbox())
        transport.connectError = MQTTError.library(operation: "", code: 7, message: "refused")
        _ = link.step(nowMillis: 0)
        _ = link.step(nowMillis: 2_000)
        XCTAssertEqual(link.backoff.failures, 2)
        transport.connectError = nil
        _ = link.step(nowMillis: 6_000)
        transport.queuedEvents = [.connected(sessionPresent: false)]
        let reports = link.step(nowMillis: 6_100)
        XCTAssertEqual(reports, [.connected(birth: 3, sessionPresent: false)])
        XCTAssertEqual(link.state, .connected)
        XCTAssertEqual(link.backoff.failures, 0)
        XCTAssertEqual(transport.published.last?.retain, true)
        XCTAssertEqual(transport.published.last.map { String(decoding: $0.payload, as: UTF8.self) }, #"{"state":"online","birth":3}"#)
    }

    func testMissingConnackTimesOutIntoARetry() {
        let transport = ScriptedTransport()
        let link = makeLink(transport, MemoryOutbox())
        _ = link.step(nowMillis: 0)
        XCTAssertEqual(link.state, .connecting(sinceMillis: 0))
        let reports = link.step(nowMillis: 15_000)
        XCTAssertEqual(link.state, .waiting(untilMillis: 17_000))
        XCTAssertEqual(reports.count, 1)
    }

    func testOnlyASuccessReasonCodeDeletesFromTheOutbox() {
        let transport = ScriptedTransport()
        let outbox = MemoryOutbox()
        outbox.enqueue(topic: "vehicles/V/events", payload: "a")
        outbox.enqueue(topic: "vehicles/V/events", payload: "b")
        outbox.enqueue(topic: "vehicles/V/state", payload: "c")
        let link = makeLink(transport, outbox)
        _ = link.step(nowMillis: 0)
        transport.queuedEvents = [.connected(sessionPresent: true)]
        _ = link.step(nowMillis: 10)
        // birth = mid 1; a, b, c = mids 2, 3, 4.
        XCTAssertEqual(transport.published.map(\.topic), ["vehicles/V/status", "vehicles/V/events", "vehicles/V/events", "vehicles/V/state"])
        XCTAssertEqual(transport.published[1].userProperties, [MQTTUserProperty("uuid", "uuid-1"), MQTTUserProperty("seq", "0")])
        transport.queuedEvents = [.published(messageID: 2, reasonCode: 0x87), .published(messageID: 3, reasonCode: 0x10), .published(messageID: 4, reasonCode: 0)]
        let reports = link.step(nowMillis: 20)
        XCTAssertEqual(reports, [.refused(outboxID: 1, topic: "vehicles/V/events", reasonCode: 0x87)])
        // 0x10 "no matching subscribers" is a success; 0x87 keeps the message.
        XCTAssertEqual(outbox.messages.map(\.id), [1])
        XCTAssertEqual(outbox.refused, [1: 0x87])
    }

    func testLostConnectionSchedulesReconnectAndKeepsInFlight() {
        let transport = ScriptedTransport()
        let outbox = MemoryOutbox()
        outbox.enqueue(topic: "t", payload: "x")
        let link = makeLink(transport, outbox)
        _ = link.step(nowMillis: 0)
        transport.queuedEvents = [.connected(sessionPresent: false)]
        _ = link.step(nowMillis: 10)
        XCTAssertEqual(link.inFlightCount, 1)
        transport.serviceError = MQTTError.library(operation: "", code: 7, message: "The connection was lost.")
        let reports = link.step(nowMillis: 20)
        XCTAssertEqual(reports, [.connectionLost("MQTT error 7 (MOSQ_ERR_CONN_LOST): The connection was lost.", retryInMillis: 2_000)])
        XCTAssertEqual(link.inFlightCount, 1, "libmosquitto resends it after reconnect; we keep the mapping")
        XCTAssertEqual(outbox.messages.count, 1)
    }

    func testRefusedAndHeldMessagesAreRetriedAfterAReconnectWithOthersStillInFlight() throws {
        let transport = ScriptedTransport()
        let outbox = MemoryOutbox()
        outbox.enqueue(topic: "vehicles/V/events", payload: "a")          // id 1, refused below
        let link = makeLink(transport, outbox)
        _ = link.step(nowMillis: 0)
        transport.queuedEvents = [.connected(sessionPresent: true)]
        _ = link.step(nowMillis: 10)                                        // birth = mid 1, a = mid 2
        transport.queuedEvents = [.published(messageID: 2, reasonCode: 0x87)]
        _ = link.step(nowMillis: 20)
        outbox.enqueue(topic: "vehicles/V/events", payload: "b")          // id 2: held behind a
        outbox.enqueue(topic: "vehicles/V/state", payload: "c")           // id 3: other topic, flows
        _ = link.step(nowMillis: 30)
        XCTAssertEqual(transport.published.suffix(1).map { String(decoding: $0.payload, as: UTF8.self) }, ["c"])
        XCTAssertEqual(link.inFlightCount, 1, "c is in flight when the connection drops")
        transport.serviceError = MQTTError.library(operation: "", code: 7, message: "The connection was lost.")
        _ = link.step(nowMillis: 40)
        let before = transport.published.count
        _ = link.step(nowMillis: 5_000)
        transport.queuedEvents = [.connected(sessionPresent: true)]         // holds are released
        _ = link.step(nowMillis: 5_010)
        _ = link.step(nowMillis: 5_020)
        let after = transport.published.dropFirst(before).map { String(decoding: $0.payload, as: UTF8.self) }
        XCTAssertEqual(after.filter { $0 == "a" || $0 == "b" }, ["a", "b"], "the released topic is published again, in order")
        XCTAssertFalse(after.contains("c"), "c is still in flight (libmosquitto resends it): not handed over twice")
        XCTAssertEqual(link.inFlightCount, 3)
    }

    func testStopPublishesOfflineThenDisconnects() {
        let transport = ScriptedTransport()
        let link = makeLink(transport, MemoryOutbox())
        _ = link.step(nowMillis: 0)
        transport.queuedEvents = [.connected(sessionPresent: false)]
        _ = link.step(nowMillis: 10)
        var fakeNow: UInt64 = 0
        link.stop(drainMillis: 100) { fakeNow += 10; return fakeNow }
        XCTAssertEqual(transport.published.last.map { String(decoding: $0.payload, as: UTF8.self) }, #"{"state":"offline","birth":1}"#)
        XCTAssertEqual(transport.disconnects, 1)
        XCTAssertEqual(link.state, .stopped)
        XCTAssertEqual(link.step(nowMillis: 1_000_000), [])
    }

    /// What was queued just before the stop (the last audit checkpoint) goes out and is
    /// acknowledged before "offline" and the DISCONNECT, not at the next connect.
    func testStopHandsTheOutboxOverBeforeOffline() {
        let transport = ScriptedTransport()
        let outbox = MemoryOutbox()
        let link = makeLink(transport, outbox)
        _ = link.step(nowMillis: 0)
        transport.queuedEvents = [.connected(sessionPresent: true)]
        _ = link.step(nowMillis: 10, readable: true, writable: false)   // online = mid 1; the outbox is empty
        outbox.enqueue(topic: "vehicles/V/audit", payload: "checkpoint", sequence: 9)
        transport.queuedEvents = [.published(messageID: 2, reasonCode: 0)]
        var fakeNow: UInt64 = 0
        link.stop(drainMillis: 100) { fakeNow += 10; return fakeNow }
        XCTAssertEqual(transport.published.map(\.topic), ["vehicles/V/status", "vehicles/V/audit", "vehicles/V/status"])
        XCTAssertEqual(transport.published[1].userProperties.first { $0.name == "seq" }?.value, "9")
        XCTAssertEqual(transport.published.last.map { String(decoding: $0.payload, as: UTF8.self) }, #"{"state":"offline","birth":1}"#)
        XCTAssertEqual(outbox.messages, [], "acknowledged before the stop returned")
        XCTAssertEqual(transport.disconnects, 1)
    }

    /// A broker that never acknowledges costs the stop its drain time, no more: offline and the
    /// DISCONNECT still follow, and the message waits in the outbox for the next connect.
    func testStopGivesUpOnTheOutboxAfterTheDrainTime() {
        let transport = ScriptedTransport()
        let outbox = MemoryOutbox()
        let link = makeLink(transport, outbox)
        _ = link.step(nowMillis: 0)
        transport.queuedEvents = [.connected(sessionPresent: true)]
        _ = link.step(nowMillis: 10, readable: true, writable: false)
        outbox.enqueue(topic: "vehicles/V/audit", payload: "checkpoint")
        var fakeNow: UInt64 = 0
        link.stop(drainMillis: 100) { fakeNow += 10; return fakeNow }
        XCTAssertEqual(transport.published.map(\.topic), ["vehicles/V/status", "vehicles/V/audit", "vehicles/V/status"])
        XCTAssertEqual(outbox.messages.count, 1)
        XCTAssertEqual(transport.disconnects, 1)
        XCTAssertLessThanOrEqual(fakeNow, 220, "two drain periods at most")
    }
}

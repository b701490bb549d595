// CloudLink over several endpoints with scripted transports: a fresh transport per node, the
// unacknowledged outbox handed over again, retained state replayed on a CONNACK without a
// session, the broker's session expiry cap, and the optional heartbeat. Virtual time.
import XCTest
@testable import Drivers

final class CloudLinkFailoverTests: XCTestCase {
    private let nodeA = MQTTEndpoint(host: "node-a", port: 1883, usesTLS: false)
    private let nodeB = MQTTEndpoint(host: "node-b", port: 1883, usesTLS: false)
    /// Every transport made, with the endpoint it was made for.
    private var made: [(MQTTEndpoint, ScriptedTransport)] = []
    private var births: UInt64 = 0

    private func makeLink(_ outbox: MemoryOutbox, settings: CloudLinkSettings = CloudLinkSettings(vehicleID: "V"),
                          random: @escaping () -> Double = { 0 }) throws -> CloudLink {
        try CloudLink(settings: settings, endpoints: [nodeA, nodeB],
                      makeTransport: { [unowned self] endpoint in
                          let transport = ScriptedTransport()
                          made.append((endpoint, transport))
                          return transport
                      },
                      outbox: outbox, nextBirthSequence: { [unowned self] in births += 1; return births }, unitRandom: random)
    }

    private var current: ScriptedTransport { made.last!.1 }

    private func text(_ publish: MQTTPublish) -> String { String(decoding: publish.payload, as: UTF8.self) }

    /// Connects at `now` and delivers a CONNACK 10 ms later.
    @discardableResult
    private func connect(_ link: CloudLink, at now: UInt64, sessionPresent: Bool = false, before: [MQTTEvent] = []) -> [CloudLinkReport] {
        _ = link.step(nowMillis: now)
        current.queuedEvents = before + [.connected(sessionPresent: sessionPresent)]
        return link.step(nowMillis: now + 10)
    }

    func testAFailedNodeMovesTheLinkToAFreshTransportOnTheOtherAndLosesNothing() throws {
        let outbox = MemoryOutbox()
        for i in 1...3 { outbox.enqueue(topic: "vehicles/V/events", payload: "e\(i)") }
        let link = try makeLink(outbox)
        let reports = connect(link, at: 0)
        XCTAssertEqual(reports, [.connected(birth: 1, sessionPresent: false, endpoint: nodeA)])
        XCTAssertEqual(made.map(\.0), [nodeA])
        let onA = made[0].1
        XCTAssertEqual(onA.published.filter { $0.topic.hasSuffix("/events") }.map(text), ["e1", "e2", "e3"])
        // e1 is acknowledged (mid 2; the birth was mid 1), then node A dies with e2, e3 in flight.
        onA.queuedEvents = [.published(messageID: 2, reasonCode: 0)]
        _ = link.step(nowMillis: 20)
        onA.serviceError = MQTTError.library(operation: "", code: 7, message: "The connection was lost.")
        let lost = link.step(nowMillis: 30)
        XCTAssertEqual(lost, [.connectionLost("MQTT error 7 (MOSQ_ERR_CONN_LOST): The connection was lost.", retryInMillis: 0, at: nodeA)],
                       "node B was never tried: due at once (switch jitter 0 here)")
        XCTAssertEqual(link.currentEndpoint, nodeB)

        let onB = connect(link, at: 30)
        XCTAssertEqual(onB, [.connected(birth: 2, sessionPresent: false, endpoint: nodeB)])
        XCTAssertEqual(made.map(\.0), [nodeA, nodeB], "a fresh transport for node B")
        XCTAssertEqual(onA.connects, 1, "the dead node's transport is not used again")
        let b = made[1].1
        XCTAssertEqual(b.subscriptions, [], "no subscriptions configured")
        XCTAssertEqual(b.published.filter { $0.topic.hasSuffix("/events") }.map(text), ["e2", "e3"],
                       "everything unacknowledged is handed to the new node")
        XCTAssertEqual(link.inFlightCount, 2, "mapped to the new transport's message IDs")
        b.queuedEvents = [.published(messageID: 2, reasonCode: 0), .published(messageID: 3, reasonCode: 0)]
        _ = link.step(nowMillis: 50)
        XCTAssertEqual(outbox.messages, [], "acknowledged by node B, nothing lost")
    }

    func testASwitchToANodeDueAtOnceWaitsASmallJitter() throws {
        let link = try makeLink(MemoryOutbox(), random: { 0.5 })
        connect(link, at: 0)
        current.serviceError = MQTTError.library(operation: "", code: 7, message: "lost")
        let reports = link.step(nowMillis: 1_000)
        XCTAssertEqual(reports, [.connectionLost("MQTT error 7 (MOSQ_ERR_CONN_LOST): lost", retryInMillis: 500, at: nodeA)])
        XCTAssertEqual(link.state, .waiting(untilMillis: 1_500))
    }

    func testRetainedStateIsPublishedAgainOnANodeWithoutTheSession() throws {
        let outbox = MemoryOutbox()
        outbox.enqueue(topic: "vehicles/V/state", payload: "state-1", retain: true)
        outbox.enqueue(topic: "vehicles/V/config/reported", payload: "config-1", retain: true)
        outbox.enqueue(topic: "vehicles/V/events", payload: "e1")
        let link = try makeLink(outbox)
        connect(link, at: 0)
        current.queuedEvents = (2...4).map { .published(messageID: Int32($0), reasonCode: 0) }
        _ = link.step(nowMillis: 20)
        XCTAssertEqual(outbox.messages, [])
        current.serviceError = MQTTError.library(operation: "", code: 7, message: "lost")
        _ = link.step(nowMillis: 30)
        connect(link, at: 30)
        let onB = current.published.map { "\($0.topic) \(text($0)) retain=\($0.retain)" }
        XCTAssertEqual(onB, ["vehicles/V/status {\"state\":\"online\",\"birth\":2} retain=true",
                             "vehicles/V/state state-1 retain=true",
                             "vehicles/V/config/reported config-1 retain=true"],
                       "presence, then the last acknowledged retained messages; events are not replayed")
        XCTAssertEqual(current.published[1].userProperties, [MQTTUserProperty("uuid", "uuid-1"), MQTTUserProperty("seq", "0")],
                       "the same UUID: the cloud sees a duplicate, not a new report")

        // A resumed session (node B kept it): nothing replayed.
        current.serviceError = MQTTError.library(operation: "", code: 7, message: "lost")
        _ = link.step(nowMillis: 100)
        let before = made.count
        _ = link.step(nowMillis: 200_000)
        current.queuedEvents = [.connected(sessionPresent: true)]
        _ = link.step(nowMillis: 200_010)
        XCTAssertEqual(made.count, before + 1, "moved back to node A (due long ago)")
        XCTAssertEqual(current.published.map(\.topic), ["vehicles/V/status"], "session present: only the presence")
    }

    func testANewerRetainedMessageStillInTheOutboxIsNotPrecededByTheOldOne() throws {
        let outbox = MemoryOutbox()
        outbox.enqueue(topic: "vehicles/V/state", payload: "state-1", retain: true)
        let link = try makeLink(outbox)
        connect(link, at: 0)
        current.queuedEvents = [.published(messageID: 2, reasonCode: 0)]
        _ = link.step(nowMillis: 20)
        current.serviceError = MQTTError.library(operation: "", code: 7, message: "lost")
        _ = link.step(nowMillis: 30)
        outbox.enqueue(topic: "vehicles/V/state", payload: "state-2", retain: true)   // written while offline
        connect(link, at: 30)
        XCTAssertEqual(current.published.filter { $0.topic.hasSuffix("/state") }.map(text), ["state-2"])
    }

    func testABrokerThatCapsTheSessionExpiryIsReportedOncePerConnection() throws {
        let link = try makeLink(MemoryOutbox())
        let reports = connect(link, at: 0, before: [.sessionExpiry(seconds: 300)])
        XCTAssertEqual(reports, [.sessionExpiryCapped(grantedSeconds: 300, askedSeconds: MQTTConnectOptions.defaultSessionExpirySeconds),
                                 .connected(birth: 1, sessionPresent: false, endpoint: nodeA)])
        XCTAssertEqual(link.sessionExpiryCapSeconds, 300)
        // The next connection's CONNACK says nothing: the broker granted what was asked.
        current.serviceError = MQTTError.library(operation: "", code: 7, message: "lost")
        _ = link.step(nowMillis: 100)
        XCTAssertEqual(connect(link, at: 10_000), [.connected(birth: 2, sessionPresent: false, endpoint: nodeB)])
        XCTAssertNil(link.sessionExpiryCapSeconds)
        // Granting at least what was asked is no cap.
        current.serviceError = MQTTError.library(operation: "", code: 7, message: "lost")
        _ = link.step(nowMillis: 10_100)
        let granted = connect(link, at: 100_000, before: [.sessionExpiry(seconds: MQTTConnectOptions.defaultSessionExpirySeconds)])
        XCTAssertEqual(granted.count, 1, "\(granted)")
        XCTAssertNil(link.sessionExpiryCapSeconds)
    }

    func testTheHeartbeatIsOffByDefaultAndADeadlineWhenOn() throws {
        let quiet = try makeLink(MemoryOutbox())
        connect(quiet, at: 0)
        XCTAssertNil(quiet.nextDeadline(), "no heartbeat by default: nothing to wake for")
        for now in stride(from: UInt64(20), to: 1_000_000, by: 10_000) { _ = quiet.step(nowMillis: now) }
        XCTAssertFalse(current.published.contains { $0.topic.hasSuffix("/heartbeat") })

        made.removeAll()
        births = 0
        let link = try makeLink(MemoryOutbox(), settings: CloudLinkSettings(vehicleID: "V", heartbeatSeconds: 60))
        connect(link, at: 0)
        XCTAssertEqual(link.nextDeadline(), 60_010, "a deadline, not polling")
        _ = link.step(nowMillis: 30_000)
        XCTAssertFalse(current.published.contains { $0.topic.hasSuffix("/heartbeat") }, "not before it is due")
        _ = link.step(nowMillis: 60_010)
        _ = link.step(nowMillis: 120_010)
        let beats = current.published.filter { $0.topic == "vehicles/V/heartbeat" }
        XCTAssertEqual(beats.map(text), [#"{"birth":1,"seq":1}"#, #"{"birth":1,"seq":2}"#])
        XCTAssertTrue(beats.allSatisfy { $0.qos == .atMostOnce && !$0.retain })
        XCTAssertEqual(link.nextDeadline(), 180_010)
        current.serviceError = MQTTError.library(operation: "", code: 7, message: "lost")
        _ = link.step(nowMillis: 130_000)
        guard case .waiting(let until) = link.state else { return XCTFail("\(link.state)") }
        XCTAssertEqual(link.nextDeadline(), until, "no heartbeat while disconnected")
    }
}

// Reason codes: every code from 0x80 up is a refusal whatever the broker (mosquitto refuses an
// ACL-denied publish with 0x87, ejabberd with 0x90 and a subscription with 0x8F), named in logs.
import XCTest
@testable import Drivers

final class MQTTReasonCodeTests: XCTestCase {
    func testTheTableNamesTheCodesBrokersSend() {
        XCTAssertEqual(MQTTReasonCode.describe(0x87), "0x87 Not authorized")
        XCTAssertEqual(MQTTReasonCode.describe(0x90), "0x90 Topic Name invalid")
        XCTAssertEqual(MQTTReasonCode.describe(0x8F), "0x8f Topic Filter invalid")
        XCTAssertEqual(MQTTReasonCode.describe(0x97), "0x97 Quota exceeded")
        XCTAssertEqual(MQTTReasonCode.describe(0x9E), "0x9e Shared Subscriptions not supported")
        XCTAssertEqual(MQTTReasonCode.describe(0x8E), "0x8e Session taken over")
        XCTAssertEqual(MQTTReasonCode.describe(0x10), "0x10 No matching subscribers")
        XCTAssertEqual(MQTTReasonCode.describe(0x00), "0x00 Success")
        XCTAssertEqual(MQTTReasonCode.describe(0xFE), "0xfe", "an unknown code is shown as a number")
        // Every refusal the standard defines, 0x80 to 0xA2, has a name (0xA3-0xFF are undefined).
        let defined: [Int32] = [0x80, 0x81, 0x82, 0x83, 0x84, 0x85, 0x86, 0x87, 0x88, 0x89, 0x8A, 0x8B, 0x8C, 0x8D, 0x8E, 0x8F,
                                0x90, 0x91, 0x92, 0x93, 0x94, 0x95, 0x96, 0x97, 0x98, 0x99, 0x9A, 0x9B, 0x9C, 0x9D, 0x9E, 0x9F,
                                0xA0, 0xA1, 0xA2]
        XCTAssertEqual(defined.filter { MQTTReasonCode.name($0) == nil }, [])
        XCTAssertEqual(Set(defined.compactMap(MQTTReasonCode.name)).count, defined.count, "no name used twice")
    }

    func testEveryCodeFrom0x80IsARefusal() {
        XCTAssertEqual((0..<256).filter { MQTTReasonCode.isRefusal(Int32($0)) }, Array(0x80..<256))
    }

    private func connectedLink(_ transport: ScriptedTransport, _ outbox: MemoryOutbox, subscriptions: [String] = []) -> CloudLink {
        let link = CloudLink(settings: CloudLinkSettings(vehicleID: "V", subscriptions: subscriptions), transport: transport, outbox: outbox,
                             nextBirthSequence: { 1 }, unitRandom: { 0 })
        _ = link.step(nowMillis: 0)
        transport.queuedEvents = [.connected(sessionPresent: false)]
        _ = link.step(nowMillis: 10)
        return link
    }

    func testARefusedSubscriptionIsReportedWithItsFilter() {
        let transport = ScriptedTransport()
        let link = connectedLink(transport, MemoryOutbox(), subscriptions: ["vehicles/V/cmd", "vehicles/V/revocations"])
        XCTAssertEqual(transport.subscriptions, ["vehicles/V/cmd", "vehicles/V/revocations"])
        transport.queuedEvents = [.subscribed(topicFilter: "vehicles/V/cmd", reasonCode: 1),
                                  .subscribed(topicFilter: "vehicles/V/revocations", reasonCode: 0x8F)]
        let reports = link.step(nowMillis: 20)
        XCTAssertEqual(reports, [.subscriptionRefused(topicFilter: "vehicles/V/revocations", reasonCode: 0x8F)],
                       "granted QoS 1 is no news; 0x8F is")
        XCTAssertEqual(link.state, .connected, "a refused subscription does not end the connection")
    }

    func testEjabberdsPublishRefusalKeepsTheMessageLikeMosquittos() {
        let transport = ScriptedTransport()
        let outbox = MemoryOutbox()
        outbox.enqueue(topic: "vehicles/V/events", payload: "denied")
        let link = connectedLink(transport, outbox)
        transport.queuedEvents = [.published(messageID: 2, reasonCode: 0x90)]
        XCTAssertEqual(link.step(nowMillis: 20), [.refused(outboxID: 1, topic: "vehicles/V/events", reasonCode: 0x90)])
        XCTAssertEqual(outbox.messages.count, 1)
        XCTAssertEqual(link.lastError, "broker refused publish to vehicles/V/events (reason 0x90 Topic Name invalid)")
    }

    func testARefusedConnectionAndADisconnectByTheBrokerAreNamed() {
        let transport = ScriptedTransport()
        let link = CloudLink(settings: CloudLinkSettings(vehicleID: "V"), transport: transport, outbox: MemoryOutbox(),
                             nextBirthSequence: { 1 }, unitRandom: { 0 })
        _ = link.step(nowMillis: 0)
        transport.queuedEvents = [.connectRefused(reasonCode: 0x87)]
        _ = link.step(nowMillis: 10)
        XCTAssertEqual(link.lastError, "broker refused the connection (reason 0x87 Not authorized)")
        _ = link.step(nowMillis: 5_000)
        transport.queuedEvents = [.connected(sessionPresent: false)]
        _ = link.step(nowMillis: 5_010)
        transport.queuedEvents = [.disconnected(reasonCode: 0x9E)]
        _ = link.step(nowMillis: 5_020)
        XCTAssertEqual(link.lastError, "disconnected by the broker (reason 0x9e Shared Subscriptions not supported)")
    }
}

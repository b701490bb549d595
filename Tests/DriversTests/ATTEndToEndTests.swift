// The phone's ATT client against the car's ATT server, entirely in memory: every PDU one side
// returns is handed to the other, as the L2CAP socket would, until both are quiet.
import XCTest
@testable import Drivers
import Protocol

final class ATTEndToEndTests: XCTestCase {
    private struct Link {
        var client: ATTClientConnection
        var server: ATTServerConnection
        var toCarMessages: [Bytes] = []
        var toPhoneMessages: [Bytes] = []
        var pdusToCar = 0
        var pdusToPhone = 0

        /// Delivers PDUs both ways until nothing is left (bounded so a ping-pong bug fails).
        mutating func pump(toCar: [Bytes] = [], toPhone: [Bytes] = []) throws {
            var carInbox = toCar
            var phoneInbox = toPhone
            var rounds = 0
            while !carInbox.isEmpty || !phoneInbox.isEmpty {
                rounds += 1
                XCTAssertLessThan(rounds, 10_000)
                if rounds >= 10_000 { return }
                if !carInbox.isEmpty {
                    let pdu = carInbox.removeFirst()
                    XCTAssertLessThanOrEqual(pdu.count, server.mtu, "phone PDU within the MTU")
                    pdusToCar += 1
                    let output = server.receive(pdu)
                    XCTAssertNil(output.fatalError)
                    toCarMessages += output.messages
                    phoneInbox += output.pdus
                }
                if !phoneInbox.isEmpty {
                    let pdu = phoneInbox.removeFirst()
                    XCTAssertLessThanOrEqual(pdu.count, client.mtu, "car PDU within the MTU")
                    pdusToPhone += 1
                    let output = try client.receive(pdu)
                    toPhoneMessages += output.messages
                    carInbox += output.pdus
                }
            }
        }
    }

    private func connect(clientMTU: UInt16, subscription: ATTClientConnection.Subscription = .notifications) throws -> Link {
        var link = Link(client: ATTClientConnection(clientMTU: clientMTU, subscription: subscription),
                        server: ATTServerConnection(database: .car()))
        let first = link.client.start()
        try link.pump(toCar: first)
        XCTAssertTrue(link.client.isReady)
        XCTAssertTrue(link.server.isSubscribed)
        XCTAssertEqual(link.client.mtu, Int(clientMTU))
        XCTAssertEqual(link.server.mtu, Int(clientMTU))
        return link
    }

    private func maxMessage(_ seed: UInt8) -> Bytes { (0..<1024).map { UInt8(truncatingIfNeeded: $0 &* 7) ^ seed } }

    func testDiscoverySubscriptionAndAMaxMessageEachWay() throws {
        for (mtu, fragments) in [(UInt16(23), 54), (247, 5)] {
            var link = try connect(clientMTU: mtu)
            let up = maxMessage(0x01)
            let writes = try link.client.send(message: up)
            XCTAssertEqual(writes.count, fragments)
            try link.pump(toCar: writes)
            XCTAssertEqual(link.toCarMessages, [up], "MTU \(mtu)")

            let down = maxMessage(0x02)
            let notifications = try link.server.send(message: down)
            XCTAssertEqual(notifications.count, fragments)
            try link.pump(toPhone: notifications)
            XCTAssertEqual(link.toPhoneMessages, [down], "MTU \(mtu)")
        }
    }

    func testIndicationsOnlyMode() throws {
        var link = try connect(clientMTU: 23, subscription: .indications)
        let down = maxMessage(0x03)
        let first = try link.server.send(message: down)
        XCTAssertEqual(first.count, 1, "one indication at a time")
        let before = link.pdusToPhone
        try link.pump(toPhone: first)
        XCTAssertEqual(link.toPhoneMessages, [down])
        XCTAssertEqual(link.pdusToPhone - before, 54, "each fragment indicated after the previous confirmation")
        XCTAssertEqual(link.server.queuedMessageCount, 0)
    }

    func testAMessageSentBeforeTheSubscriptionArrivesAfterIt() throws {
        var link = Link(client: ATTClientConnection(), server: ATTServerConnection(database: .car()))
        XCTAssertEqual(try link.server.send(message: [0x7f, 0x01, 0x00, 0x01]), [])
        try link.pump(toCar: link.client.start())
        XCTAssertEqual(link.toPhoneMessages, [[0x7f, 0x01, 0x00, 0x01]])
    }

    func testManyMessagesBothWaysInterleaved() throws {
        var link = try connect(clientMTU: 185)
        var sentUp: [Bytes] = []
        var sentDown: [Bytes] = []
        for length in [1, 2, 178, 179, 180, 300, 1000, 1024] {
            let up = Bytes(repeating: UInt8(length & 0xFF), count: length)
            let down = Bytes(repeating: UInt8(~length & 0xFF), count: length)
            sentUp.append(up)
            sentDown.append(down)
            try link.pump(toCar: try link.client.send(message: up), toPhone: try link.server.send(message: down))
        }
        XCTAssertEqual(link.toCarMessages, sentUp)
        XCTAssertEqual(link.toPhoneMessages, sentDown)
    }
}

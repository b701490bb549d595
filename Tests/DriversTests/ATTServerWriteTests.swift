// The car's ATT server: writes, subscriptions, fragments from the phone, messages to the
// phone (notifications, indications, the queue before a subscription) and unsupported PDUs.
import XCTest
@testable import Drivers
import Protocol

final class ATTServerWriteTests: XCTestCase {
    private let fault = "7f010001"

    // MARK: CCCD

    func test_TP_GAW_SR_BV_03_C_writeCharacteristicValue_CCCD() {
        var server = carServer()
        XCTAssertFalse(server.isSubscribed)
        XCTAssertEqual(server.respond("12 0f00 0100"), "13")
        XCTAssertTrue(server.isSubscribed)
        XCTAssertEqual(server.respond("12 0f00 0000"), "13")
        XCTAssertFalse(server.isSubscribed, "0x0000 unsubscribes")
    }

    func testCCCDWriteOfAnotherLengthIsInvalidAttributeValueLength() {
        var server = carServer()
        XCTAssertEqual(server.respond("12 0f00 01"), "01120f000d", "no PTS id")
        XCTAssertEqual(server.respond("12 0f00 010000"), "01120f000d")
        XCTAssertEqual(server.respond("12 0f00"), "01120f000d")
        XCTAssertFalse(server.isSubscribed)
    }

    func testCCCDBitsTheCharacteristicLacksAreImproperlyConfigured() {
        var server = carServer()
        XCTAssertEqual(server.respond("12 0f00 0400"), "01120f00fd", "reserved bit")
        XCTAssertEqual(server.respond("12 0900 0100"), "01120900fd", "Service Changed only indicates")
        XCTAssertEqual(server.respond("12 0900 0200"), "13")
        XCTAssertFalse(server.isSubscribed, "the Service Changed CCCD is not the key service's")
    }

    func testWriteCommandToACCCDIsIgnored() {
        var server = carServer()
        XCTAssertEqual(server.receive(attHex("52 0f00 0100")), ATTServerOutput())
        XCTAssertFalse(server.isSubscribed)
    }

    // MARK: Write errors

    func test_TP_GAW_SR_BI_02_C_writeInvalidHandle() {
        var server = carServer()
        XCTAssertEqual(server.respond("12 0000 00"), "0112000001")
        XCTAssertEqual(server.respond("12 1000 00"), "0112100001")
    }

    func test_TP_GAW_SR_BI_03_C_writeNotPermitted() {
        var server = carServer()
        XCTAssertEqual(server.respond("12 0300 41"), "0112030003", "Device Name is read only")
        XCTAssertEqual(server.respond("12 0100 0018"), "0112010003", "service declaration")
        XCTAssertEqual(server.respond("12 0b00 00"), "01120b0003", "characteristic declaration")
        XCTAssertEqual(server.respond("12 0e00 00"), "01120e0003", "car-to-phone value")
    }

    func testWriteCommandToAReadOnlyAttributeIsSilentlyIgnored() {
        var server = carServer()
        XCTAssertEqual(server.receive(attHex("52 0300 41")), ATTServerOutput())
        XCTAssertEqual(server.respond("0a 0300"), "0b" + Array("OpenCarKey".utf8).hexString, "unchanged")
    }

    // MARK: Fragments from the phone

    func testWriteRequestCarryingAWholeMessage() {
        var server = carServer()
        XCTAssertEqual(server.receive(attHex("12 0c00 c00004" + fault)),
                       ATTServerOutput(pdus: [attHex("13")], messages: [attHex(fault)]))
    }

    func test_TP_GAW_SR_BV_01_C_writeWithoutResponseCarryingFragments() {
        var server = carServer()
        XCTAssertEqual(server.receive(attHex("52 0c00 800003 aa")), ATTServerOutput())
        XCTAssertEqual(server.receive(attHex("52 0c00 41 bbcc")), ATTServerOutput(messages: [attHex("aabbcc")]))
    }

    func testFragmentErrorOnWriteRequestIsApplicationErrorAndFatal() {
        var server = carServer()
        XCTAssertEqual(server.receive(attHex("12 0c00 41 aa")),
                       ATTServerOutput(pdus: [attHex("01120c0080")], fatalError: .continuationWithoutStart(sequence: 1)))
        XCTAssertTrue(server.isClosed)
        XCTAssertEqual(server.receive(attHex("0a 0300")), ATTServerOutput(), "a closed link answers nothing")
        XCTAssertThrowsError(try server.send(message: [1])) { XCTAssertEqual($0 as? ATTSendError, .closed) }
    }

    func testFragmentErrorOnWriteCommandIsFatalWithoutAPDU() {
        var server = carServer()
        XCTAssertEqual(server.receive(attHex("52 0c00 800003 aa")), ATTServerOutput())
        XCTAssertEqual(server.receive(attHex("52 0c00 02 bb")),
                       ATTServerOutput(fatalError: .sequenceGap(expected: 1, received: 2)))
        XCTAssertTrue(server.isClosed)
    }

    func testEmptyWriteToPhoneToCarIsAnEmptyFragment() {
        var server = carServer()
        XCTAssertEqual(server.receive(attHex("52 0c00")), ATTServerOutput(fatalError: .emptyFragment))
    }

    func testPDULongerThanTheMTUIsInvalidPDU() {
        var server = carServer()
        let long = "12 0c00 c00014" + String(repeating: "aa", count: 20) // 24 bytes > 23
        XCTAssertEqual(server.respond(long), "0112000004", "no PTS id")
        XCTAssertEqual(server.receive(attHex("52 0c00 c00014" + String(repeating: "aa", count: 20))), ATTServerOutput(),
                       "a command is dropped")
        XCTAssertFalse(server.isClosed)
    }

    // MARK: Unsupported and ignored PDUs

    func testUnsupportedRequestsGetRequestNotSupported() {
        var server = carServer()
        XCTAssertEqual(server.respond("0e 0300 0500"), "010e000006", "Read Multiple")
        XCTAssertEqual(server.respond("16 0c00 0000 aa"), "0116000006", "Prepare Write")
        XCTAssertEqual(server.respond("18 01"), "0118000006", "Execute Write")
        XCTAssertEqual(server.respond("20 0300 0500"), "0120000006", "Read Multiple Variable")
        XCTAssertEqual(server.respond("3f"), "013f000006", "unknown request")
    }

    func testCommandsAndServerPDUsAreIgnored() {
        var server = carServer()
        for pdu in ["d2 0c00 c00001aa 000000000000000000000000", "7f", "1b 0e00 00", "1d 0e00 00",
                    "01 0a 0300 01", "0b 00", "13", "1e"] {
            XCTAssertEqual(server.receive(attHex(pdu)), ATTServerOutput(), pdu)
        }
        XCTAssertEqual(server.receive([]), ATTServerOutput(), "empty PDU")
        XCTAssertFalse(server.isClosed)
    }

    func testMalformedKnownRequestsAreInvalidPDU() {
        var server = carServer()
        XCTAssertEqual(server.respond("0a 03"), "010a000004")
        XCTAssertEqual(server.respond("0c 0300 00"), "010c000004")
        XCTAssertEqual(server.respond("04 0100 ff"), "0104000004")
        XCTAssertEqual(server.respond("08 0100 ffff 0028 00"), "0108000004", "a 3-byte UUID")
        XCTAssertEqual(server.respond("10 0100 ffff"), "0110000004")
        XCTAssertEqual(server.respond("06 0100 ffff 00"), "0106000004")
        XCTAssertEqual(server.respond("12 0c"), "0112000004")
        XCTAssertEqual(server.receive(attHex("1e 00")), ATTServerOutput(pdus: [attHex("011e000004")]))
    }

    // MARK: Messages to the phone

    func test_TP_GAN_SR_BV_01_C_notification() throws {
        var server = carServer()
        _ = server.respond("12 0f00 0100")
        XCTAssertEqual(try server.send(message: attHex(fault)), [attHex("1b 0e00 c00004" + fault)])
    }

    func testNotificationsOfAMaxMessageAtMTU23And247() throws {
        for (mtu, count) in [(UInt16(23), 54), (247, 5)] {
            var server = carServer(mtu: mtu)
            _ = server.respond("12 0f00 0100")
            let pdus = try server.send(message: Bytes(repeating: 0x5a, count: 1024))
            XCTAssertEqual(pdus.count, count)
            XCTAssertEqual(Array(pdus[0].prefix(6)), attHex("1b 0e00 800400"))
            XCTAssertTrue(pdus.allSatisfy { $0.count <= Int(mtu) })
        }
    }

    func test_TP_GAI_SR_BV_01_C_indicationsOneAtATime() throws {
        var server = carServer()
        _ = server.respond("12 0f00 0200")
        let message = Bytes(repeating: 0x11, count: 30) // 2 fragments at MTU 23
        XCTAssertEqual(try server.send(message: message), [attHex("1d 0e00 80001e") + Bytes(repeating: 0x11, count: 17)])
        XCTAssertEqual(try server.send(message: attHex(fault)), [], "waits behind the outstanding indication")
        XCTAssertEqual(server.queuedMessageCount, 2)
        XCTAssertEqual(server.receive(attHex("1e")).pdus, [attHex("1d 0e00 41") + Bytes(repeating: 0x11, count: 13)])
        XCTAssertEqual(server.receive(attHex("1e")).pdus, [attHex("1d 0e00 c00004" + fault)])
        XCTAssertEqual(server.receive(attHex("1e")).pdus, [])
        XCTAssertEqual(server.receive(attHex("1e")).pdus, [], "a stray confirmation releases nothing")
        XCTAssertEqual(server.queuedMessageCount, 0)
    }

    func testBothEnabledPrefersNotifications() throws {
        var server = carServer()
        _ = server.respond("12 0f00 0300")
        XCTAssertEqual(try server.send(message: attHex(fault)), [attHex("1b 0e00 c00004" + fault)])
    }

    func testSwitchingFromIndicationsToNotificationsReleasesTheRest() throws {
        var server = carServer()
        _ = server.respond("12 0f00 0200")
        _ = try server.send(message: Bytes(repeating: 0x11, count: 30))
        XCTAssertEqual(server.receive(attHex("12 0f00 0100")).pdus,
                       [attHex("13"), attHex("1b 0e00 41") + Bytes(repeating: 0x11, count: 13)])
        XCTAssertEqual(server.queuedMessageCount, 0)
    }

    func testMessagesWaitForASubscriptionUpToFour() throws {
        var server = carServer()
        for index in 0..<4 {
            XCTAssertEqual(try server.send(message: [UInt8(index)]), [])
        }
        XCTAssertThrowsError(try server.send(message: [4])) {
            XCTAssertEqual($0 as? ATTSendError, .backlogFull(limit: 4))
        }
        let output = server.receive(attHex("12 0f00 0100"))
        XCTAssertEqual(output.pdus, [attHex("13")] + (0..<4).map { attHex("1b 0e00 c00001") + [UInt8($0)] })
        XCTAssertEqual(server.queuedMessageCount, 0)
    }

    func testQueuedMessagesAreCutAtTheMTUWhenReleased() throws {
        var server = carServer()
        _ = try server.send(message: Bytes(repeating: 1, count: 100))
        _ = server.respond("02 f700")
        let pdus = server.receive(attHex("12 0f00 0100")).pdus
        XCTAssertEqual(pdus.count, 2, "write response and one 247-MTU notification")
    }

    func testIndicationBacklogIsBounded() throws {
        var server = carServer()
        _ = server.respond("12 0f00 0200")
        // The first goes out at once; four more wait for confirmations.
        XCTAssertEqual(try server.send(message: [1]).count, 1)
        for _ in 0..<4 { XCTAssertEqual(try server.send(message: [1]), []) }
        XCTAssertEqual(server.queuedMessageCount, 4)
        XCTAssertThrowsError(try server.send(message: [1])) {
            XCTAssertEqual($0 as? ATTSendError, .backlogFull(limit: 4))
        }
    }

    func testSendRejectsInvalidMessages() {
        var server = carServer()
        _ = server.respond("12 0f00 0100")
        XCTAssertThrowsError(try server.send(message: [])) {
            XCTAssertEqual($0 as? ATTSendError, .invalidMessage(.emptyMessage))
        }
        XCTAssertThrowsError(try server.send(message: Bytes(repeating: 0, count: 1025))) {
            XCTAssertEqual($0 as? ATTSendError, .invalidMessage(.oversizedMessage(length: 1025, limit: 1024)))
        }
    }

    func testConnectionsAreIndependent() {
        // No PTS id. One link closed by a bad fragment leaves another mid-message untouched.
        var bad = carServer()
        var good = carServer()
        XCTAssertEqual(good.receive(attHex("52 0c00 800003 aa")), ATTServerOutput())
        XCTAssertNotNil(bad.receive(attHex("52 0c00 41 bb")).fatalError)
        XCTAssertEqual(good.receive(attHex("52 0c00 41 bbcc")), ATTServerOutput(messages: [attHex("aabbcc")]))
        XCTAssertFalse(good.isClosed)
    }

    func testDatabaseLayoutMatchesTheDocumentedHandles() {
        let database = GATTDatabase.car()
        XCTAssertEqual(database.lastHandle, 0x0F)
        XCTAssertEqual(database.valueHandle(of: KeyServiceUUIDs.phoneToCar), GATTDatabase.CarHandles.phoneToCar)
        XCTAssertEqual(database.valueHandle(of: KeyServiceUUIDs.carToPhone), GATTDatabase.CarHandles.carToPhone)
        XCTAssertEqual(database.cccdHandle(ofValue: 0x0E), GATTDatabase.CarHandles.carToPhoneCCCD)
        XCTAssertEqual(database.cccdHandle(ofValue: 0x08), GATTDatabase.CarHandles.serviceChangedCCCD)
        XCTAssertNil(database.cccdHandle(ofValue: 0x0C))
        XCTAssertEqual(KeyServiceUUIDs.service.description, "c0de0001-0c4b-4f70-656e-4361724b6579")
        XCTAssertEqual(KeyServiceUUIDs.service.wireBytes.hexString, KeyUUIDWire.service)
        XCTAssertEqual(ATTUUID(0x2800).description, "0x2800")
        XCTAssertNil(ATTUUID(string: "c0de0001-0c4b-4f70-656e-4361724b657"))
    }
}

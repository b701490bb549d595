// The phone's ATT client: the exact request sequence against the car's database, and each
// way it gives up (no PTS ids: these are the client side of this project's own service).
import XCTest
@testable import Drivers
import Protocol

final class ATTClientTests: XCTestCase {
    private func step(_ client: inout ATTClientConnection, _ pdu: String,
                      file: StaticString = #filePath, line: UInt = #line) throws -> [String] {
        try client.receive(attHex(pdu)).pdus.map(\.hexString)
    }

    /// A client that has just sent Find By Type Value.
    private func clientAfterMTU() throws -> ATTClientConnection {
        var client = ATTClientConnection()
        _ = client.start()
        _ = try client.receive(attHex("03 f700"))
        return client
    }

    func testDiscoveryAndSubscriptionSequence() throws {
        var client = ATTClientConnection()
        XCTAssertEqual(client.start(), [attHex("02 f700")])
        XCTAssertEqual(client.start(), [], "start is once")
        XCTAssertEqual(try step(&client, "03 b900"), ["060100ffff0028" + KeyUUIDWire.service])
        XCTAssertEqual(client.mtu, 185)
        XCTAssertEqual(try step(&client, "07 0a00 0f00"), ["080a000f000328"])
        XCTAssertEqual(try step(&client, "0915 0b000c0c00" + KeyUUIDWire.phoneToCar + "0d00300e00" + KeyUUIDWire.carToPhone),
                       ["080e000f000328"])
        XCTAssertEqual(try step(&client, "01 08 0e00 0a"), ["040f000f00"])
        XCTAssertEqual(try step(&client, "0501 0f000229"), ["120f000100"])
        XCTAssertFalse(client.isReady)
        let output = try client.receive(attHex("13"))
        XCTAssertEqual(output, ATTClientOutput(becameReady: true))
        XCTAssertTrue(client.isReady)
        XCTAssertEqual(client.phoneToCarHandle, 0x0C)
        XCTAssertEqual(client.carToPhoneHandle, 0x0E)
        XCTAssertEqual(client.cccdHandle, 0x0F)
        XCTAssertEqual(try client.send(message: attHex("7f010001")), [attHex("52 0c00 c00004 7f010001")])
    }

    func testIndicationsModeWritesTwoToTheCCCD() throws {
        var client = ATTClientConnection(subscription: .indications)
        _ = client.start()
        _ = try client.receive(attHex("03 1700"))
        _ = try client.receive(attHex("07 0a00 0f00"))
        _ = try client.receive(attHex("0915 0b000c0c00" + KeyUUIDWire.phoneToCar))
        XCTAssertEqual(try step(&client, "0915 0d00300e00" + KeyUUIDWire.carToPhone), ["080e000f000328"])
        XCTAssertEqual(try step(&client, "01 08 0e00 0a"), ["040f000f00"])
        XCTAssertEqual(try step(&client, "0501 0f000229"), ["120f000200"])
    }

    func testServiceNotFound() throws {
        var client = try clientAfterMTU()
        XCTAssertThrowsError(try client.receive(attHex("01 06 0100 0a"))) {
            XCTAssertEqual($0 as? ATTClientError, .serviceNotFound)
        }
        XCTAssertEqual(try client.receive(attHex("07 0a00 0f00")), ATTClientOutput(), "a failed client ignores input")
    }

    func testCharacteristicMissing() throws {
        var client = try clientAfterMTU()
        _ = try client.receive(attHex("07 0a00 0f00"))
        _ = try client.receive(attHex("0915 0d00300e00" + KeyUUIDWire.carToPhone))
        XCTAssertThrowsError(try client.receive(attHex("01 08 0e00 0a"))) {
            XCTAssertEqual($0 as? ATTClientError, .characteristicMissing(KeyServiceUUIDs.phoneToCar))
        }
    }

    func testCharacteristicWithoutTheNeededPropertyCountsAsMissing() throws {
        var client = try clientAfterMTU()
        _ = try client.receive(attHex("07 0a00 0f00"))
        // phone-to-car without write-without-response (0x08 only).
        _ = try client.receive(attHex("0915 0b00080c00" + KeyUUIDWire.phoneToCar))
        _ = try client.receive(attHex("0915 0d00300e00" + KeyUUIDWire.carToPhone))
        XCTAssertThrowsError(try client.receive(attHex("01 08 0e00 0a"))) {
            XCTAssertEqual($0 as? ATTClientError, .characteristicMissing(KeyServiceUUIDs.phoneToCar))
        }
    }

    func testDescriptorMissing() throws {
        var client = try clientAfterMTU()
        _ = try client.receive(attHex("07 0a00 0f00"))
        _ = try client.receive(attHex("0915 0b000c0c00" + KeyUUIDWire.phoneToCar + "0d00300e00" + KeyUUIDWire.carToPhone))
        _ = try client.receive(attHex("01 08 0e00 0a"))
        XCTAssertThrowsError(try client.receive(attHex("01 04 0f00 0a"))) {
            XCTAssertEqual($0 as? ATTClientError, .descriptorMissing)
        }
    }

    func testDescriptorSearchContinuesPastOtherDescriptors() throws {
        var client = try clientAfterMTU()
        _ = try client.receive(attHex("07 0a00 1000"))
        _ = try client.receive(attHex("0915 0b000c0c00" + KeyUUIDWire.phoneToCar + "0d00300e00" + KeyUUIDWire.carToPhone))
        XCTAssertEqual(try step(&client, "01 08 0e00 0a"), ["040f001000"])
        XCTAssertEqual(try step(&client, "0501 0f000129"), ["0410001000"], "0x2901 is not the CCCD")
        XCTAssertEqual(try step(&client, "0501 10000229"), ["1210000100"])
    }

    func testErrorResponsesAndUnexpectedPDUs() throws {
        var first = ATTClientConnection()
        _ = first.start()
        XCTAssertThrowsError(try first.receive(attHex("01 02 0000 06"))) {
            XCTAssertEqual($0 as? ATTClientError, .errorResponse(request: 0x02, handle: 0, code: .requestNotSupported))
        }
        var second = ATTClientConnection()
        _ = second.start()
        XCTAssertThrowsError(try second.receive(attHex("0b 00"))) {
            XCTAssertEqual($0 as? ATTClientError, .unexpectedPDU(opcode: 0x0B))
        }
        var third = ATTClientConnection()
        _ = third.start()
        XCTAssertThrowsError(try third.receive(attHex("03 f7"))) {
            XCTAssertEqual($0 as? ATTClientError, .malformedPDU(opcode: 0x03))
        }
        var fourth = ATTClientConnection()
        XCTAssertThrowsError(try fourth.receive([])) { XCTAssertEqual($0 as? ATTClientError, .malformedPDU(opcode: 0)) }
    }

    func testDiscoveryThatDoesNotMoveForwardIsMalformed() throws {
        var client = try clientAfterMTU()
        _ = try client.receive(attHex("07 0a00 0f00"))
        _ = try client.receive(attHex("0915 0b000c0c00" + KeyUUIDWire.phoneToCar))
        XCTAssertThrowsError(try client.receive(attHex("0915 0b000c0c00" + KeyUUIDWire.phoneToCar))) {
            XCTAssertEqual($0 as? ATTClientError, .malformedPDU(opcode: 0x09))
        }
    }

    func testServiceRangeBackwardsIsMalformed() throws {
        var client = try clientAfterMTU()
        XCTAssertThrowsError(try client.receive(attHex("07 0f00 0a00"))) {
            XCTAssertEqual($0 as? ATTClientError, .malformedPDU(opcode: 0x07))
        }
    }

    func testSendBeforeReadyAndInvalidMessages() throws {
        let client = ATTClientConnection()
        XCTAssertThrowsError(try client.send(message: [1])) { XCTAssertEqual($0 as? ATTClientError, .notReady) }
        let ready = try readyClient()
        XCTAssertThrowsError(try ready.send(message: [])) {
            XCTAssertEqual($0 as? ATTClientError, .invalidMessage(.emptyMessage))
        }
    }

    private func readyClient() throws -> ATTClientConnection {
        var client = try clientAfterMTU()
        _ = try client.receive(attHex("07 0a00 0f00"))
        _ = try client.receive(attHex("0915 0b000c0c00" + KeyUUIDWire.phoneToCar + "0d00300e00" + KeyUUIDWire.carToPhone))
        _ = try client.receive(attHex("01 08 0e00 0a"))
        _ = try client.receive(attHex("0501 0f000229"))
        _ = try client.receive(attHex("13"))
        XCTAssertTrue(client.isReady)
        return client
    }

    func testNotificationsAndIndicationsAfterReady() throws {
        var client = try readyClient()
        XCTAssertEqual(try client.receive(attHex("1b 0e00 c00004 7f010001")), ATTClientOutput(messages: [attHex("7f010001")]))
        XCTAssertEqual(try client.receive(attHex("1d 0e00 c00001 aa")),
                       ATTClientOutput(pdus: [attHex("1e")], messages: [attHex("aa")]))
        XCTAssertEqual(try client.receive(attHex("1d 0800 0100ffff")), ATTClientOutput(pdus: [attHex("1e")]),
                       "Service Changed is confirmed but carries no fragment")
        XCTAssertEqual(try client.receive(attHex("1b 0300 00")), ATTClientOutput(), "other handles are ignored")
    }

    func testBadFragmentFromTheCarIsAnError() throws {
        var client = try readyClient()
        XCTAssertThrowsError(try client.receive(attHex("1b 0e00 41 aa"))) {
            XCTAssertEqual($0 as? ATTClientError, .fragment(.continuationWithoutStart(sequence: 1)))
        }
        XCTAssertThrowsError(try client.send(message: [1])) { XCTAssertEqual($0 as? ATTClientError, .notReady) }
    }
}

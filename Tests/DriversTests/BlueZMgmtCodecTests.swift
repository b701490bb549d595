// Byte vectors for every management command the gateway sends and every event it parses
// (layouts from BlueZ doc/mgmt-api.txt; addresses as btvirt assigns them).
import XCTest
@testable import Drivers

final class BlueZMgmtCodecTests: XCTestCase {
    private let phone = MgmtVectors.phoneAddress

    // MARK: Commands

    func testSimpleCommandVectors() throws {
        let cases: [(MgmtCommand, String)] = [
            (.readControllerIndexList(), "03 00 ff ff 00 00"),
            (.readControllerInfo(index: 0), "04 00 00 00 00 00"),
            (.setPowered(true, index: 0), "05 00 00 00 01 00 01"),
            (.setPowered(false, index: 1), "05 00 01 00 01 00 00"),
            (.setConnectable(true, index: 0), "07 00 00 00 01 00 01"),
            (.setLowEnergy(true, index: 0), "0d 00 00 00 01 00 01"),
            (.setBondable(false, index: 0), "09 00 00 00 01 00 00"),
            (.setBREDR(false, index: 0), "2a 00 00 00 01 00 00"),
            (.setAdvertising(false, index: 0), "29 00 00 00 01 00 00"),
            (.removeAdvertising(instance: 1, index: 0), "3f 00 00 00 01 00 01"),
            (.getConnectionInfo(address: phone, type: .lePublic, index: 0), "31 00 00 00 07 00 01 00 01 01 aa 00 01"),
            // mgmt-api.txt Disconnect Command 0x0014: Address (6 octets), Address_Type (1 octet).
            (.disconnect(address: phone, type: .leRandom, index: 0), "14 00 00 00 07 00 01 00 01 01 aa 00 02"),
            (.startDiscovery(index: 1), "23 00 01 00 01 00 06"),
            (.stopDiscovery(index: 1), "24 00 01 00 01 00 06"),
        ]
        for (command, hex) in cases {
            XCTAssertEqual(bluezHex(command.encoded), hex, "\(command)")
        }
    }

    func testSetLocalNameIsFixedFieldsNulPadded() throws {
        let bytes = try MgmtCommand.setLocalName("CarKeyGW", shortName: "CK", index: 0).encoded
        XCTAssertEqual(bytes.count, 6 + 249 + 11)
        XCTAssertEqual(bluezHex(Array(bytes.prefix(14))), "0f 00 00 00 04 01 43 61 72 4b 65 79 47 57")
        XCTAssertEqual(bytes[14], 0)
        XCTAssertEqual(Array(bytes[255..<258]), [0x43, 0x4B, 0x00])
        XCTAssertThrowsError(try MgmtCommand.setLocalName(String(repeating: "x", count: 249), index: 0))
        XCTAssertThrowsError(try MgmtCommand.setLocalName("ok", shortName: "elevenchars", index: 0))
    }

    func testSetPrivacyCarriesTheIRK() throws {
        let irk = [UInt8](0..<16)
        XCTAssertEqual(bluezHex(try MgmtCommand.setPrivacy(true, identityResolvingKey: irk, index: 0).encoded),
                       "2f 00 00 00 11 00 01 00 01 02 03 04 05 06 07 08 09 0a 0b 0c 0d 0e 0f")
        XCTAssertThrowsError(try MgmtCommand.setPrivacy(true, identityResolvingKey: [1, 2], index: 0)) { error in
            XCTAssertEqual(error as? MgmtError, .invalidParameter("IRK is 2 bytes, must be 16"))
        }
    }

    func testAddAdvertisingForTheCar() throws {
        let data = try CarAdvertisement.advertisingData(rotatingIdentifier: MgmtVectors.identifier)
        let command = try MgmtCommand.addAdvertising(instance: 1, flags: .car, advertisingData: data, index: 0)
        XCTAssertEqual(bluezHex(command.encoded),
                       "3e 00 00 00 27 00 01 43 00 00 00 00 00 00 00 1c 00 "
                       + "11 07 79 65 4b 72 61 43 6e 65 70 4f 4b 0c 01 00 de c0 "
                       + "09 ff ff ff 11 22 33 44 55 66")
        XCTAssertThrowsError(try MgmtCommand.addAdvertising(instance: 0, flags: .car, advertisingData: [], index: 0))
    }

    // MARK: Events

    private func parse(_ hex: String) throws -> MgmtEvent? { try MgmtEvent.parse(bluezBytes(hex)) }

    func testCommandCompleteAndStatus() throws {
        XCTAssertEqual(try parse("01 00 00 00 07 00 05 00 00 01 02 00 00"),
                       MgmtEvent(controllerIndex: 0, body: .commandComplete(opcode: 0x0005, status: .success,
                                                                             returnParameters: [0x01, 0x02, 0x00, 0x00])))
        XCTAssertEqual(try MgmtCurrentSettings.parse([0x01, 0x02, 0x00, 0x00]), [.powered, .lowEnergy])
        XCTAssertEqual(try parse("02 00 00 00 03 00 05 00 0a"),
                       MgmtEvent(controllerIndex: 0, body: .commandStatus(opcode: 0x0005, status: .busy)))
        XCTAssertEqual(MgmtStatus.busy.description, "Busy")
        XCTAssertEqual(MgmtStatus(rawValue: 0x11).description, "Invalid Index")
    }

    func testIndexSettingsErrorAndAdvertisingEvents() throws {
        XCTAssertEqual(try parse("03 00 00 00 01 00 07")?.body, .controllerError(code: 7))
        XCTAssertEqual(try parse("04 00 01 00 00 00"), MgmtEvent(controllerIndex: 1, body: .indexAdded))
        XCTAssertEqual(try parse("05 00 00 00 00 00")?.body, .indexRemoved)
        XCTAssertEqual(try parse("06 00 00 00 04 00 01 02 00 00")?.body, .newSettings([.powered, .lowEnergy]))
        XCTAssertEqual(try parse("13 00 00 00 02 00 06 01")?.body, .discovering(addressTypes: 6, active: true))
        XCTAssertEqual(try parse("23 00 00 00 01 00 01")?.body, .advertisingAdded(instance: 1))
        XCTAssertEqual(try parse("24 00 00 00 01 00 01")?.body, .advertisingRemoved(instance: 1))
    }

    func testDeviceConnectedAndDisconnected() throws {
        XCTAssertEqual(try parse("0b 00 00 00 0d 00 01 00 01 01 aa 00 01 00 00 00 00 00 00")?.body,
                       .deviceConnected(address: phone, type: .lePublic, flags: 0, eir: []))
        // Reason 1: supervision timeout (link loss); the socket sees ETIMEDOUT at the same time.
        XCTAssertEqual(try parse("0c 00 00 00 08 00 01 00 01 01 aa 00 01 01")?.body,
                       .deviceDisconnected(address: phone, type: .lePublic, reason: .connectionTimeout))
    }

    func testDeviceFoundWithEIR() throws {
        let hex = "12 00 01 00 35 00 00 00 00 01 aa 00 01 c4 00 00 00 00 27 00 "
            + "02 01 06 "
            + "11 07 79 65 4b 72 61 43 6e 65 70 4f 4b 0c 01 00 de c0 09 ff ff ff 11 22 33 44 55 66 "
            + "07 09 43 61 72 4b 65 79"
        guard case .deviceFound(let found)? = try parse(hex)?.body else { return XCTFail("not Device Found") }
        XCTAssertEqual(found.address, MgmtVectors.hci0Address)
        XCTAssertEqual(found.addressType, .lePublic)
        XCTAssertEqual(found.rssi, -60)
        XCTAssertTrue(found.isConnectable)
        let parsed = ParsedAdvertisement(structures: try AdvertisingData.parse(found.eir))
        XCTAssertEqual(parsed.flags, 0x06)
        XCTAssertEqual(parsed.serviceUUIDs, [CarAdvertisement.keyServiceUUID])
        XCTAssertEqual(parsed.carIdentifier, MgmtVectors.identifier)
        XCTAssertEqual(parsed.name, "CarKey")
    }

    func testConnectionInfoReplyFromBtvirt() throws {
        // btvirt: RSSI -1, TX -1, max TX 4 whatever the distance.
        guard case .commandComplete(0x0031, .success, let parameters)? =
                try parse("01 00 00 00 0d 00 31 00 00 01 00 01 01 aa 00 01 ff ff 04")?.body else { return XCTFail() }
        let info = try MgmtConnectionInfo.parse(parameters)
        XCTAssertEqual(info, MgmtConnectionInfo(address: phone, addressType: .lePublic, rssi: -1, txPower: -1, maxTxPower: 4))
        XCTAssertEqual(info.measuredRSSI, -1)
    }

    func testControllerInfoAndIndexList() throws {
        let info = try MgmtControllerInfo.parse(MgmtVectors.controllerInfo(address: MgmtVectors.hci0Address,
                                                                           settings: [.bredr, .lowEnergy]))
        XCTAssertEqual(info.address.description, "00:AA:01:00:00:00")
        XCTAssertEqual(info.currentSettings, [.bredr, .lowEnergy])
        XCTAssertEqual(info.name, "carkey")
        XCTAssertEqual(try MgmtControllerIndexList.parse(bluezBytes("02 00 00 00 01 00")), [0, 1])
        XCTAssertThrowsError(try MgmtControllerIndexList.parse(bluezBytes("03 00 00 00 01 00")))
        XCTAssertThrowsError(try MgmtControllerInfo.parse([UInt8](repeating: 0, count: 279)))
    }

    func testUnknownEventsAreSkippedNotErrors() throws {
        XCTAssertNil(try parse("ff 00 00 00 02 00 aa bb"))
        XCTAssertNil(try parse("25 00 00 00 00 00"))
    }

    func testMalformedEventsThrowTypedErrors() {
        XCTAssertThrowsError(try parse("01 00 00")) { error in
            XCTAssertEqual(error as? MgmtError, .truncated(what: "event header", needed: 4, available: 3))
        }
        XCTAssertThrowsError(try parse("06 00 00 00 04 00 01 02")) { error in
            XCTAssertEqual(error as? MgmtError, .lengthMismatch(declared: 4, actual: 2))
        }
        // Device Found whose EIR length runs past the packet.
        XCTAssertThrowsError(try parse("12 00 00 00 0f 00 00 00 00 01 aa 00 01 c4 00 00 00 00 05 00 02"))
        // Address type 9 does not exist.
        XCTAssertThrowsError(try parse("0c 00 00 00 08 00 01 00 01 01 aa 00 09 01"))
        // Every prefix of a valid event fails cleanly, never traps.
        let valid = bluezBytes("0c 00 00 00 08 00 01 00 01 01 aa 00 01 01")
        for n in 0..<valid.count {
            XCTAssertThrowsError(try MgmtEvent.parse(Array(valid.prefix(n))))
        }
    }
}

// AD structures, the car's advertisement, UUID and address text forms.
import XCTest
@testable import Drivers

final class BlueZAdvertisingDataTests: XCTestCase {
    func testCarAdvertisementFillsTheTwentyEightBytesExactly() throws {
        let data = try CarAdvertisement.advertisingData(rotatingIdentifier: MgmtVectors.identifier)
        XCTAssertEqual(data.count, 28)
        XCTAssertEqual(bluezHex(data), "11 07 79 65 4b 72 61 43 6e 65 70 4f 4b 0c 01 00 de c0 09 ff ff ff 11 22 33 44 55 66")
        XCTAssertThrowsError(try CarAdvertisement.advertisingData(rotatingIdentifier: [1, 2, 3])) { error in
            XCTAssertEqual(error as? AdvertisingDataError, .invalidField("rotating identifier is 3 bytes, must be 6"))
        }
    }

    func testBuilderRejectsDataBeyondTheLimit() {
        XCTAssertThrowsError(try AdvertisingData.build([.completeUUID128List([CarAdvertisement.keyServiceUUID]),
                                                        .completeName("CarKeyGateway")])) { error in
            XCTAssertEqual(error as? AdvertisingDataError, .tooLong(length: 33, limit: 28))
        }
        XCTAssertThrowsError(try AdvertisingData.build([ADStructure(type: 0xFF, data: [UInt8](repeating: 0, count: 255))], limit: 1000))
        XCTAssertEqual(try AdvertisingData.build([.flags(0x06), .shortenedName("CK")], limit: 31), [2, 1, 6, 3, 8, 0x43, 0x4B])
    }

    func testParserStopsAtZeroLengthPadding() throws {
        let structures = try AdvertisingData.parse([2, 1, 6, 0, 0, 0, 0xFF])
        XCTAssertEqual(structures, [.flags(6)])
        XCTAssertEqual(try AdvertisingData.parse([]), [])
    }

    func testParserReportsTruncatedStructures() {
        XCTAssertThrowsError(try AdvertisingData.parse([2, 1, 6, 5, 9, 0x41])) { error in
            XCTAssertEqual(error as? AdvertisingDataError, .truncatedStructure(offset: 3, declared: 5, available: 2))
        }
        XCTAssertThrowsError(try AdvertisingData.parse([1])) { error in
            XCTAssertEqual(error as? AdvertisingDataError, .truncatedStructure(offset: 0, declared: 1, available: 0))
        }
        // Every prefix of a valid advertisement parses or fails with a typed error; none traps.
        let valid = try! CarAdvertisement.advertisingData(rotatingIdentifier: MgmtVectors.identifier)
        for n in 0...valid.count { _ = try? AdvertisingData.parse(Array(valid.prefix(n))) }
    }

    func testParsedAdvertisementFields() throws {
        let bytes = bluezBytes("02 01 06 03 08 43 4b 05 ff 4c 00 aa bb")
        let parsed = ParsedAdvertisement(structures: try AdvertisingData.parse(bytes))
        XCTAssertEqual(parsed.flags, 6)
        XCTAssertEqual(parsed.name, "CK")
        XCTAssertEqual(parsed.manufacturerData, [0x004C: [0xAA, 0xBB]])
        XCTAssertNil(parsed.carIdentifier)
    }

    func testUUID128TextRoundTrip() {
        let uuid = CarAdvertisement.keyServiceUUID
        XCTAssertEqual(uuid.description, "c0de0001-0c4b-4f70-656e-4361724b6579")
        XCTAssertEqual(uuid.bigEndianBytes.first, 0xC0)
        XCTAssertNil(UUID128("c0de0001-0c4b-4f70-656e-4361724b657"))
        XCTAssertNil(UUID128("c0de0001-0c4b-4f70-656e-4361724b65zz"))
    }

    func testBluetoothAddressIsLittleEndianInBdaddr() {
        let address = BluetoothAddress("00:AA:01:01:00:01")!
        XCTAssertEqual(address.bytes, [0x01, 0x00, 0x01, 0x01, 0xAA, 0x00])
        XCTAssertEqual(address.description, "00:AA:01:01:00:01")
        XCTAssertEqual(BluetoothAddress("c0:de:c0:de:00:01")?.description, "C0:DE:C0:DE:00:01")
        for bad in ["", "00:AA:01:01:00", "00:AA:01:01:00:01:02", "0:AA:01:01:00:01", "GG:AA:01:01:00:01", "00-AA-01-01-00-01"] {
            XCTAssertNil(BluetoothAddress(bad), bad)
        }
        XCTAssertNil(BluetoothAddress(littleEndian: [1, 2, 3]))
        XCTAssertEqual(BluetoothAddress.any.description, "00:00:00:00:00:00")
    }
}

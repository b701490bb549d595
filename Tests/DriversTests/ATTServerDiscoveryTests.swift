// The car's ATT server: MTU exchange, discovery and reads, as byte vectors against the
// database layout documented in CarGATTDatabase.swift. Test names carry the GATT test-suite
// IDs (GATT.TS, server role) where one covers the case.
import XCTest
@testable import Drivers
import Protocol

final class ATTServerDiscoveryTests: XCTestCase {
    // MARK: MTU

    func test_TP_GAC_SR_BV_01_C_exchangeMTU() {
        var server = carServer()
        XCTAssertEqual(server.mtu, 23, "23 before any exchange")
        XCTAssertEqual(server.respond("02 0002"), "03f700", "client 512, car prefers 247")
        XCTAssertEqual(server.mtu, 247)
    }

    func testExchangeMTUTakesTheSmallerValue() {
        var server = carServer()
        XCTAssertEqual(server.respond("02 b900"), "03f700")
        XCTAssertEqual(server.mtu, 185)
    }

    func testExchangeMTUBelow23CountsAs23() {
        var server = carServer()
        XCTAssertEqual(server.respond("02 1000"), "03f700")
        XCTAssertEqual(server.mtu, 23)
    }

    func testSecondExchangeMTUIsAnsweredButKeepsTheFirstValue() {
        var server = carServer()
        XCTAssertEqual(server.respond("02 1700"), "03f700")
        XCTAssertEqual(server.respond("02 0002"), "03f700")
        XCTAssertEqual(server.mtu, 23, "no PTS id: the spec allows one exchange per connection")
    }

    func testPreferredMTUIsClamped() {
        XCTAssertEqual(ATTServerConnection(database: .car(), preferredMTU: 10).preferredMTU, 23)
        XCTAssertEqual(ATTServerConnection(database: .car(), preferredMTU: 1000).preferredMTU, 517)
        var small = carServer(preferredMTU: 23)
        XCTAssertEqual(small.respond("02 0002"), "031700")
        XCTAssertEqual(small.mtu, 23)
    }

    func testExchangeMTUWithWrongLengthIsInvalidPDU() {
        var server = carServer()
        XCTAssertEqual(server.respond("02 00"), "0102000004")
        XCTAssertEqual(server.respond("02 000200"), "0102000004")
        XCTAssertEqual(server.mtu, 23)
    }

    // MARK: Primary services

    func test_TP_GAD_SR_BV_01_C_discoverAllPrimaryServices() {
        var server = carServer()
        // MTU 23: the two 16-bit services fit; the 128-bit one has another length, so it is next.
        XCTAssertEqual(server.respond("10 0100 ffff 0028"), "1106" + "010005000018" + "060009000118")
        XCTAssertEqual(server.respond("10 0a00 ffff 0028"), "1114" + "0a000f00" + KeyUUIDWire.service)
        XCTAssertEqual(server.respond("10 1000 ffff 0028"), "011010000a")
    }

    func testDiscoverAllPrimaryServicesWithA128BitGroupType() {
        var server = carServer()
        // 0x2800 in Base-UUID form is the same type.
        XCTAssertEqual(server.respond("10 0100 ffff fb349b5f80000080001000000028 0000"),
                       "1106" + "010005000018" + "060009000118")
    }

    func testNoSecondaryServices() {
        var server = carServer()
        XCTAssertEqual(server.respond("10 0100 ffff 0128"), "011001000a")
    }

    func testReadByGroupTypeOfAnotherTypeIsUnsupportedGroupType() {
        var server = carServer()
        XCTAssertEqual(server.respond("10 0100 ffff 0328"), "0110010010")
    }

    func test_TP_GAD_SR_BV_02_C_discoverPrimaryServiceByUUID() {
        var server = carServer()
        XCTAssertEqual(server.respond("06 0100 ffff 0028" + KeyUUIDWire.service), "070a000f00")
        XCTAssertEqual(server.respond("06 0100 ffff 0028 0018"), "0701000500")
        XCTAssertEqual(server.respond("06 0100 ffff 0028 0118"), "0706000900")
        XCTAssertEqual(server.respond("06 0b00 ffff 0028" + KeyUUIDWire.service), "01060b000a")
        XCTAssertEqual(server.respond("06 0100 ffff 0028 0f18"), "010601000a", "no Battery Service")
    }

    // MARK: Characteristics and descriptors

    func test_TP_GAD_SR_BV_04_C_discoverAllCharacteristicsOfAService() {
        var server = carServer()
        // 21-byte entries: one per response at MTU 23.
        XCTAssertEqual(server.respond("08 0a00 0f00 0328"), "0915" + "0b000c0c00" + KeyUUIDWire.phoneToCar)
        XCTAssertEqual(server.respond("08 0c00 0f00 0328"), "0915" + "0d00300e00" + KeyUUIDWire.carToPhone)
        XCTAssertEqual(server.respond("08 0e00 0f00 0328"), "01080e000a")
        var large = carServer(mtu: 247)
        XCTAssertEqual(large.respond("08 0a00 0f00 0328"),
                       "0915" + "0b000c0c00" + KeyUUIDWire.phoneToCar + "0d00300e00" + KeyUUIDWire.carToPhone)
    }

    func testDiscoverAllCharacteristicsOfTheDatabase() {
        var server = carServer()
        // 7-byte entries, three fit at MTU 23 (2 + 3 * 7); the next request starts at 0x0008.
        XCTAssertEqual(server.respond("08 0100 ffff 0328"), "0907" + "0200020300002a" + "0400020500012a" + "0700200800052a")
        // Then the 21-byte entries of the key service.
        XCTAssertEqual(server.respond("08 0800 ffff 0328"), "0915" + "0b000c0c00" + KeyUUIDWire.phoneToCar)
    }

    func test_TP_GAD_SR_BV_05_C_discoverCharacteristicsByUUID() {
        // The client reads every declaration in the range and keeps the UUID it wants; at MTU
        // 247 both key characteristics come in one response, and the 16-bit ones stop a list
        // that would mix lengths.
        var server = carServer(mtu: 247)
        XCTAssertEqual(server.respond("08 0100 ffff 0328"), "0907" + "0200020300002a" + "0400020500012a" + "0700200800052a")
        XCTAssertEqual(server.respond("08 0800 ffff 0328"),
                       "0915" + "0b000c0c00" + KeyUUIDWire.phoneToCar + "0d00300e00" + KeyUUIDWire.carToPhone)
    }

    func test_TP_GAD_SR_BV_06_C_discoverAllCharacteristicDescriptors() {
        var server = carServer()
        XCTAssertEqual(server.respond("04 0f00 0f00"), "0501 0f000229".noSpaces)
        XCTAssertEqual(server.respond("04 0900 0900"), "0501 09000229".noSpaces)
        XCTAssertEqual(server.respond("04 0c00 0c00"), "0502 0c00".noSpaces + KeyUUIDWire.phoneToCar)
        XCTAssertEqual(server.respond("04 0e00 0f00"), "0502 0e00".noSpaces + KeyUUIDWire.carToPhone,
                       "a 128-bit type first: the 16-bit CCCD waits for the next request")
    }

    func testFindInformationOverTheWholeDatabaseAtMTU23() {
        var server = carServer()
        XCTAssertEqual(server.respond("04 0100 ffff"), "0501" + "01000028" + "02000328" + "0300002a" + "04000328" + "0500012a")
        XCTAssertEqual(server.respond("04 1000 ffff"), "010410000a")
    }

    // MARK: Handle ranges

    func testStartHandleZeroIsInvalidHandle() {
        var server = carServer()
        XCTAssertEqual(server.respond("04 0000 ffff"), "0104000001", "no PTS id")
        XCTAssertEqual(server.respond("06 0000 ffff 0028 0018"), "0106000001")
        XCTAssertEqual(server.respond("08 0000 ffff 0328"), "0108000001")
        XCTAssertEqual(server.respond("10 0000 ffff 0028"), "0110000001")
    }

    func testStartAfterEndIsInvalidHandleWithTheStartHandle() {
        var server = carServer()
        XCTAssertEqual(server.respond("04 0500 0100"), "0104050001", "no PTS id")
        XCTAssertEqual(server.respond("06 0500 0100 0028 0018"), "0106050001")
        XCTAssertEqual(server.respond("08 0500 0100 0328"), "0108050001")
        XCTAssertEqual(server.respond("10 0500 0100 0028"), "0110050001")
    }

    func testStartEqualToEndIsAValidRange() {
        var server = carServer()
        XCTAssertEqual(server.respond("04 0100 0100"), "050101000028")
    }

    // MARK: Reads

    func test_TP_GAR_SR_BV_01_C_readCharacteristicValue() {
        var server = carServer()
        XCTAssertEqual(server.respond("0a 0300"), "0b" + Array("OpenCarKey".utf8).hexString)
        XCTAssertEqual(server.respond("0a 0500"), "0b0000", "appearance 0x0000 (unknown)")
        XCTAssertEqual(server.respond("0a 0100"), "0b0018", "a service declaration is readable")
        XCTAssertEqual(server.respond("0a 0d00"), "0b300e00" + KeyUUIDWire.carToPhone)
    }

    func test_TP_GAR_SR_BI_01_C_readInvalidHandle() {
        var server = carServer()
        XCTAssertEqual(server.respond("0a 0000"), "010a000001")
        XCTAssertEqual(server.respond("0a 1000"), "010a100001")
        XCTAssertEqual(server.respond("0a ffff"), "010affff01")
    }

    func test_TP_GAR_SR_BI_02_C_readNotPermitted() {
        var server = carServer()
        XCTAssertEqual(server.respond("0a 0c00"), "010a0c0002", "phone-to-car is write only")
        XCTAssertEqual(server.respond("0a 0e00"), "010a0e0002", "car-to-phone is notify/indicate only")
        XCTAssertEqual(server.respond("0a 0800"), "010a080002", "Service Changed is indicate only")
    }

    func test_TP_GAR_SR_BV_03_C_readUsingCharacteristicUUID() {
        var server = carServer()
        XCTAssertEqual(server.respond("08 0100 ffff 002a"), "090c0300" + Array("OpenCarKey".utf8).hexString)
        XCTAssertEqual(server.respond("08 0100 ffff 012a"), "090405000000")
    }

    func testReadUsingCharacteristicUUIDNotPermittedAndNotFound() {
        var server = carServer()
        XCTAssertEqual(server.respond("08 0100 ffff" + KeyUUIDWire.phoneToCar), "01080c0002", "no PTS id checked")
        XCTAssertEqual(server.respond("08 0100 ffff 192a"), "010801000a", "no Battery Level")
    }

    func testReadTruncatesToMTUMinusOne() {
        let name = String(repeating: "N", count: 30)
        var server = ATTServerConnection(database: .car(deviceName: name))
        XCTAssertEqual(server.respond("0a 0300"), "0b" + String(repeating: "4e", count: 22))
        // Read By Type cuts at MTU - 4.
        XCTAssertEqual(server.respond("08 0300 0300 002a"), "09150300" + String(repeating: "4e", count: 19))
    }

    func test_TP_GAR_SR_BV_04_C_readLongCharacteristicValue() {
        let name = String(repeating: "N", count: 30)
        var server = ATTServerConnection(database: .car(deviceName: name))
        XCTAssertEqual(server.respond("0c 0300 1600"), "0d" + String(repeating: "4e", count: 8))
        XCTAssertEqual(server.respond("0c 0300 1e00"), "0d", "offset == length: empty part")
    }

    func testReadBlobOnAShortValueIsAnsweredNormally() {
        var server = carServer()
        // Attribute Not Long is optional (Vol 3 Part F 3.4.4.5); the car answers.
        XCTAssertEqual(server.respond("0c 0300 0000"), "0d" + Array("OpenCarKey".utf8).hexString)
        XCTAssertEqual(server.respond("0c 0300 0400"), "0d" + Array("CarKey".utf8).hexString)
    }

    func test_TP_GAR_SR_BI_13_C_readBlobInvalidOffset() {
        var server = carServer()
        XCTAssertEqual(server.respond("0c 0300 0b00"), "010c030007")
        XCTAssertEqual(server.respond("0c 0500 0300"), "010c050007")
    }

    func test_TP_GAR_SR_BI_12_C_readBlobNotPermitted() {
        var server = carServer()
        XCTAssertEqual(server.respond("0c 0c00 0000"), "010c0c0002")
    }

    func test_TP_GAR_SR_BI_14_C_readBlobInvalidHandle() {
        var server = carServer()
        XCTAssertEqual(server.respond("0c 0000 0000"), "010c000001")
        XCTAssertEqual(server.respond("0c 2000 0000"), "010c200001")
    }

    func testReadOfACCCDShowsThisConnectionsValue() {
        var server = carServer()
        XCTAssertEqual(server.respond("0a 0f00"), "0b0000")
        XCTAssertEqual(server.respond("12 0f00 0100"), "13")
        XCTAssertEqual(server.respond("0a 0f00"), "0b0100")
        var other = carServer()
        XCTAssertEqual(other.respond("0a 0f00"), "0b0000", "no PTS id: CCCDs are per connection")
    }
}

private extension String {
    var noSpaces: String { String(filter { $0 != " " }) }
}

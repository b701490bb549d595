// docs/protocol.md section 16 ("Bluetooth LE transport") and 18.12 state byte values of the ATT
// server, the GATT database and the advertisement. Each test computes the value from the code
// and requires the document to show exactly that, so neither can change without the other.
import XCTest
@testable import Drivers
import Protocol

final class BLEDocumentationTests: XCTestCase {
    /// The document with every run of white space (line breaks and indents included) made one
    /// space, so a value may wrap across lines.
    private func protocolDocument() throws -> String {
        let bytes = try Files.read(GPIOFixtures.repositoryRoot + "/docs/protocol.md", limit: 1 << 21)
        return String(decoding: bytes, as: UTF8.self).split(whereSeparator: { $0 == " " || $0 == "\n" }).joined(separator: " ")
    }

    private func spaced(_ bytes: Bytes) -> String { bluezHex(bytes) }

    private func assertDocument(_ doc: String, contains text: String, file: StaticString = #filePath, line: UInt = #line) {
        XCTAssertTrue(doc.contains(text), "docs/protocol.md does not say: \(text)", file: file, line: line)
    }

    func testAWriteToAMissingHandleOrToTheNotifyOnlyValueGetsTheDocumentedError() throws {
        let doc = try protocolDocument()
        var server = carServer()
        let missing = ATTPDU.writeRequest(handle: GATTDatabase.car().lastHandle + 1, value: [0x00])
        let missingAnswer = server.receive(missing)
        XCTAssertEqual(missingAnswer.pdus, [ATTPDU.errorResponse(request: 0x12, handle: 0x0010, code: .invalidHandle)])
        assertDocument(doc, contains: "`\(spaced(missing))` is answered `\(spaced(missingAnswer.pdus[0]))`")

        let notifyOnly = ATTPDU.writeRequest(handle: GATTDatabase.CarHandles.carToPhone, value: [0x00])
        let notifyOnlyAnswer = server.receive(notifyOnly)
        XCTAssertEqual(notifyOnlyAnswer.pdus, [ATTPDU.errorResponse(request: 0x12, handle: 0x000E, code: .writeNotPermitted)])
        assertDocument(doc, contains: "`\(spaced(notifyOnly))` is answered `\(spaced(notifyOnlyAnswer.pdus[0]))`")
        XCTAssertNil(missingAnswer.fatalError)
        XCTAssertNil(notifyOnlyAnswer.fatalError)
        XCTAssertFalse(server.isClosed, "an ATT error does not close the link")
        assertDocument(doc, contains: "None of these closes the link.")

        // Commands get no answer, wherever they go.
        for handle: UInt16 in [0x0010, GATTDatabase.CarHandles.carToPhone] {
            XCTAssertEqual(server.receive(ATTPDU.writeCommand(handle: handle, value: [0x00])), ATTServerOutput())
        }
        assertDocument(doc, contains: "a Write Command to any handle but the phone-to-car value 0x000C (a missing handle and the car-to-phone value included)")
    }

    func testTheServicesEndHandlesAreTheDocumentedOnes() throws {
        let doc = try protocolDocument()
        let database = GATTDatabase.car()
        var ends: [UInt16] = []
        for attribute in database.attributes {
            guard case .service(let end) = attribute.kind else { continue }
            ends.append(end)
            assertDocument(doc, contains: "| \(hex16(attribute.handle)) | Primary Service |")
            let row = try XCTUnwrap(doc.range(of: "| \(hex16(attribute.handle)) | Primary Service |"))
            let rest = doc[row.upperBound...].prefix { $0 != "|" }
            XCTAssertTrue(rest.hasSuffix("end group handle \(hex16(end)) "), "row \(hex16(attribute.handle)): \(rest)")
        }
        XCTAssertEqual(ends.last, database.lastHandle, "the key service ends at the last handle")
        var server = carServer()
        let byValue = server.receive(Bytes(hex: "06" + "0100" + "ffff" + "0028" + KeyUUIDWire.service)!).pdus[0]
        XCTAssertEqual(byValue, [0x07, 0x0A, 0x00, 0x0F, 0x00])
        assertDocument(doc, contains: "(Find By Type Value for the key service: `\(spaced(byValue))`)")
    }

    /// The advertisement of section 16: the kernel's Flags, then the agent's 28 bytes for the
    /// identifier of 18.12's example; the name only in the scan response; no TX power.
    func testTheAdvertisingDataAreTheDocumentedBytes() throws {
        let doc = try protocolDocument()
        let identifier = try XCTUnwrap(Bytes(hex: "5a17c3fc6179"))
        let ours = try CarAdvertisement.advertisingData(rotatingIdentifier: identifier)
        let flags = MgmtAdvertisingFlags.car
        XCTAssertEqual(flags.rawValue, 0x43)
        assertDocument(doc, contains: "Add Advertising, instance 1, flags 0x\(String(flags.rawValue, radix: 16))")
        XCTAssertTrue(flags.contains(.discoverable), "the kernel adds Flags (LE General Discoverable)")
        XCTAssertTrue(flags.contains(.localNameInScanResponse), "the kernel puts the name in the scan response")
        XCTAssertEqual(flags.rawValue & 0x30, 0, "neither TX power (0x10) nor appearance (0x20)")
        // The kernel's Flags as the lane's HCI trace shows them (dual-mode controller, BR/EDR on).
        let onAir: Bytes = [0x02, 0x01, 0x02] + ours
        XCTAssertEqual(onAir.count, AdvertisingData.legacyLimit)
        assertDocument(doc, contains: "`\(spaced(onAir))`")

        let structures = try AdvertisingData.parse(ours)
        XCTAssertEqual(structures.map(\.type), [ADStructure.completeUUID128Type, ADStructure.manufacturerSpecificType],
                       "a complete 128-bit UUID list and the identifier: no name, no TX Power Level (0x0a)")
        assertDocument(doc, contains: "| `11 07` + 16 bytes | **Complete** List of 128-bit Service UUIDs")
        assertDocument(doc, contains: "| `09 ff ff ff` + 6 bytes | Manufacturer Specific Data: company 0xFFFF")

        // No scan response data of ours: the kernel writes the name (at most 10 bytes whole).
        let configuration = AdapterConfiguration(adapter: .index(0), name: "OpenCarKey", advertisingData: ours)
        let add = try configuration.advertisingParameters(ours)
        XCTAssertEqual(add[9], UInt8(ours.count))
        XCTAssertEqual(add[10], 0, "scan response length")
        XCTAssertEqual(Array(add[1..<5]), [0x43, 0, 0, 0])
        let name = GATTDatabase.car().attribute(GATTDatabase.CarHandles.deviceName)!.value
        XCTAssertEqual(name, Array("OpenCarKey".utf8))
        assertDocument(doc, contains: "`\(spaced([UInt8(name.count + 1), ADStructure.completeNameType] + name))`, Complete Local Name \"OpenCarKey\"")
        assertDocument(doc, contains: "No TX Power Level, Appearance or other structure is sent.")
        assertDocument(doc, contains: "The advertisement carries no TX Power Level structure.")
    }

    private func hex16(_ value: UInt16) -> String {
        let digits = String(value, radix: 16, uppercase: true)
        return "0x" + String(repeating: "0", count: 4 - digits.count) + digits
    }
}

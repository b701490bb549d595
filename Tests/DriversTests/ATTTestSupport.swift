// Hex helpers and a fresh car server for the ATT/GATT tests.
import XCTest
@testable import Drivers
import Protocol

/// Hex with optional spaces: "01 0a 0000 01".
func attHex(_ text: String) -> Bytes { Bytes(hex: String(text.filter { $0 != " " }))! }

/// The key service UUIDs as they appear on the wire (little-endian).
enum KeyUUIDWire {
    static let service = "79654b7261436e65704f4b0c0100dec0"
    static let phoneToCar = "79654b7261436e65704f4b0c0200dec0"
    static let carToPhone = "79654b7261436e65704f4b0c0300dec0"
}

extension ATTServerConnection {
    /// The single response a request produced (fails the test when there is not exactly one).
    mutating func respond(_ pdu: String, file: StaticString = #filePath, line: UInt = #line) -> String {
        let output = receive(attHex(pdu))
        XCTAssertEqual(output.pdus.count, 1, "one response to \(pdu)", file: file, line: line)
        XCTAssertNil(output.fatalError, file: file, line: line)
        return output.pdus.first?.hexString ?? ""
    }
}

func carServer(mtu clientMTU: UInt16? = nil, preferredMTU: UInt16 = 247) -> ATTServerConnection {
    var server = ATTServerConnection(database: .car(), preferredMTU: preferredMTU)
    if let clientMTU {
        _ = server.receive(ATTPDU.exchangeMTURequest(clientMTU: clientMTU))
    }
    return server
}

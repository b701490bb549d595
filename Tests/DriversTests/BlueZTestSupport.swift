// Shared helpers for the BlueZ tests: hex byte vectors and a scripted mgmt peer that checks
// every command the AdapterController sends and feeds events back.
import XCTest
@testable import Drivers

/// "05 00 00 00" -> bytes (spaces ignored).
func bluezBytes(_ text: String) -> [UInt8] {
    let digits = Array(text.filter { !$0.isWhitespace })
    precondition(digits.count % 2 == 0, "odd hex")
    return stride(from: 0, to: digits.count, by: 2).map { UInt8(String(digits[$0...$0 + 1]), radix: 16)! }
}

func bluezHex(_ bytes: [UInt8]) -> String {
    bytes.map { $0 < 0x10 ? "0" + String($0, radix: 16) : String($0, radix: 16) }.joined(separator: " ")
}

enum MgmtVectors {
    static let hci0Address = BluetoothAddress("00:AA:01:00:00:00")!
    static let phoneAddress = BluetoothAddress("00:AA:01:01:00:01")!
    static let identifier: [UInt8] = [0x11, 0x22, 0x33, 0x44, 0x55, 0x66]

    /// Any event packet: code, index, length, parameters.
    static func event(_ code: UInt16, index: UInt16 = 0, _ parameters: [UInt8] = []) -> [UInt8] {
        var out = [UInt8]()
        out.appendLE(code); out.appendLE(index); out.appendLE(UInt16(parameters.count))
        return out + parameters
    }

    static func complete(_ opcode: UInt16, index: UInt16 = 0, status: UInt8 = 0, _ parameters: [UInt8] = []) -> [UInt8] {
        event(0x0001, index: index, [UInt8(opcode & 0xFF), UInt8(opcode >> 8), status] + parameters)
    }

    static func settingsBytes(_ settings: MgmtSettings) -> [UInt8] {
        var out = [UInt8](); out.appendLE(settings.rawValue); return out
    }

    /// Read Controller Information return parameters (280 bytes).
    static func controllerInfo(address: BluetoothAddress, settings: MgmtSettings, name: String = "carkey") -> [UInt8] {
        var p = address.bytes + [0x09] // Bluetooth 5.0
        p.appendLE(UInt16(0x05F1)) // manufacturer (Linux Foundation)
        p.appendLE(UInt32(0x0001_FFFF)) // supported
        p.appendLE(settings.rawValue)
        p += [0, 0, 0]
        let n = Array(name.utf8)
        p += n + [UInt8](repeating: 0, count: 249 - n.count) + [UInt8](repeating: 0, count: 11)
        return p
    }
}

/// Drives an AdapterController like the kernel would, on virtual time.
struct ScriptedMgmt {
    var controller: AdapterController
    var now: UInt64 = 0
    var reports: [AdapterReport] = []

    init(_ configuration: AdapterConfiguration) throws {
        controller = try AdapterController(configuration: configuration)
        controller.start(nowMillis: now)
    }

    /// The controller must send exactly these bytes now; then `reply` is fed back.
    mutating func expect(_ hex: String, reply: [UInt8]? = nil, file: StaticString = #filePath, line: UInt = #line) {
        expect(bytes: bluezBytes(hex), reply: reply, file: file, line: line)
    }

    mutating func expect(bytes expected: [UInt8], reply: [UInt8]? = nil, file: StaticString = #filePath, line: UInt = #line) {
        guard let command = controller.nextCommand(nowMillis: now) else {
            XCTFail("expected \(bluezHex(expected)), controller sent nothing", file: file, line: line)
            return
        }
        XCTAssertEqual(bluezHex(command.encoded), bluezHex(expected), file: file, line: line)
        XCTAssertNil(controller.nextCommand(nowMillis: now), "a second command while one is in flight", file: file, line: line)
        if let reply { feed(reply, file: file, line: line) }
    }

    /// Replies success to whatever command is sent now (settings return parameters).
    mutating func expectOpcode(_ opcode: MgmtOpcode, returning parameters: [UInt8] = [], file: StaticString = #filePath, line: UInt = #line) {
        guard let command = controller.nextCommand(nowMillis: now) else {
            XCTFail("expected \(opcode), controller sent nothing", file: file, line: line)
            return
        }
        XCTAssertEqual(command.opcode, opcode, file: file, line: line)
        feed(MgmtVectors.complete(opcode.rawValue, index: command.controllerIndex, parameters), file: file, line: line)
    }

    mutating func feed(_ packet: [UInt8], file: StaticString = #filePath, line: UInt = #line) {
        do {
            guard let event = try MgmtEvent.parse(packet) else { return }
            controller.receive(event, nowMillis: now)
            reports += controller.takeReports()
        } catch {
            XCTFail("event \(bluezHex(packet)) did not parse: \(error)", file: file, line: line)
        }
    }

    mutating func advance(_ millis: UInt64) {
        now += millis
        controller.tick(nowMillis: now)
        reports += controller.takeReports()
    }

    mutating func expectIdle(file: StaticString = #filePath, line: UInt = #line) {
        if let command = controller.nextCommand(nowMillis: now) {
            XCTFail("unexpected command \(bluezHex(command.encoded))", file: file, line: line)
        }
    }

    mutating func takeReports() -> [AdapterReport] {
        reports += controller.takeReports()
        defer { reports.removeAll() }
        return reports
    }
}

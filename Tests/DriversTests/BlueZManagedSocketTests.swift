// ManagedAdapter and ManagementScanner on a real descriptor: one end of an AF_UNIX
// SOCK_SEQPACKET pair plays the kernel's control channel (one packet per command or event).
import XCTest
import Glibc
@testable import Drivers

final class BlueZManagedSocketTests: XCTestCase {
    private func pair() throws -> (MgmtSocket, FileDescriptor) {
        var fds: [Int32] = [0, 0]
        let type = Int32(SOCK_SEQPACKET.rawValue) | Int32(SOCK_NONBLOCK.rawValue) | Int32(SOCK_CLOEXEC.rawValue)
        guard socketpair(AF_UNIX, type, 0, &fds) == 0 else { throw Errno.current("socketpair") }
        return (MgmtSocket(descriptor: FileDescriptor(rawValue: fds[0])), FileDescriptor(rawValue: fds[1]))
    }

    /// Reads the one command the adapter sent, as the kernel would.
    private func command(from kernel: FileDescriptor) throws -> [UInt8]? {
        guard case .data(let bytes) = try kernel.receive(upTo: 1024) else { return nil }
        return bytes
    }

    func testManagedAdapterBringsUpOverADescriptor() throws {
        let (socket, kernel) = try pair()
        defer { kernel.close() }
        let clock = ManualClock()
        let data = try CarAdvertisement.advertisingData(rotatingIdentifier: MgmtVectors.identifier)
        let adapter = try ManagedAdapter(configuration: AdapterConfiguration(adapter: .index(0), name: "CarKeyGW", advertisingData: data),
                                         socket: socket, clock: clock)
        defer { adapter.close() }
        adapter.start()
        var reports = try adapter.service()
        var opcodes: [UInt16] = []
        var settings: MgmtSettings = [.lowEnergy]
        // Answer every command with success, as a kernel with a fresh controller would.
        while let sent = try command(from: kernel) {
            let opcode = UInt16(sent[0]) | UInt16(sent[1]) << 8
            opcodes.append(opcode)
            let reply: [UInt8]
            switch opcode {
            case 0x0004: reply = MgmtVectors.controllerInfo(address: MgmtVectors.hci0Address, settings: settings)
            case 0x0005: settings.insert(.powered); reply = MgmtVectors.settingsBytes(settings)
            case 0x003E, 0x003F: reply = [1]
            default: reply = MgmtVectors.settingsBytes(settings)
            }
            // Noise the adapter must skip: an unknown event and another controller's news.
            _ = try kernel.sendSome(bluezBytes("ff 00 00 00 00 00")[...])
            _ = try kernel.sendSome(bluezBytes("06 00 07 00 04 00 01 00 00 00")[...])
            _ = try kernel.sendSome(MgmtVectors.complete(opcode, reply)[...])
            clock.advance(by: 5)
            reports += try adapter.service()
        }
        XCTAssertEqual(opcodes, [0x0004, 0x000D, 0x0009, 0x000F, 0x0007, 0x0005, 0x003F, 0x003E])
        XCTAssertEqual(reports, [.advertising(address: MgmtVectors.hci0Address)])
        XCTAssertTrue(adapter.state.advertising)
        XCTAssertEqual(adapter.pollTimeoutMillis, -1)
        XCTAssertEqual(adapter.malformedEvents, 0)
        // A malformed packet is counted and skipped, the loop carries on.
        _ = try kernel.sendSome(bluezBytes("06 00 00 00 09 00 01")[...])
        _ = try kernel.sendSome(bluezBytes("24 00 00 00 01 00 01")[...])
        _ = try adapter.service()
        XCTAssertEqual(adapter.malformedEvents, 1)
        XCTAssertEqual(try command(from: kernel)?.prefix(2), [0x3E, 0x00])
    }

    func testManagementScannerOverADescriptor() throws {
        let (socket, kernel) = try pair()
        defer { kernel.close() }
        let scanner = ManagementScanner(index: 1, socket: socket, clock: ManualClock())
        defer { scanner.close() }
        scanner.start()
        XCTAssertEqual(try scanner.service(), [])
        XCTAssertEqual(try command(from: kernel), bluezBytes("23 00 01 00 01 00 06"))
        _ = try kernel.sendSome(bluezBytes("01 00 01 00 04 00 23 00 00 06")[...])
        _ = try kernel.sendSome(bluezBytes("12 00 01 00 13 00 00 00 00 01 aa 00 02 b0 04 00 00 00 05 00 04 08 43 4b 31")[...])
        let seen = try scanner.service()
        XCTAssertEqual(seen.count, 1)
        XCTAssertEqual(seen.first?.addressType, .leRandom)
        XCTAssertEqual(seen.first?.rssi, -80)
        XCTAssertEqual(seen.first?.connectable, false)
        XCTAssertEqual(seen.first?.parsed.name, "CK1")
    }
}

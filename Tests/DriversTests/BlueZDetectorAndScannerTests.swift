// BluetoothdDetector over a fake /proc tree; the scanner core against scripted events.
import XCTest
import Glibc
@testable import Drivers

final class BlueZDetectorAndScannerTests: XCTestCase {
    private var created: [String] = []

    override func tearDown() {
        // Deepest first: files, then their folders, then the root.
        for path in created.reversed() { if unlink(path) != 0 { rmdir(path) } }
        created.removeAll()
    }

    private func fakeProc(_ processes: [String: String]) throws -> String {
        var template = Array("/tmp/bluez-proc-XXXXXX".utf8CString)
        guard let made = mkdtemp(&template) else { throw Errno.current("mkdtemp") }
        let root = String(cString: made)
        created.append(root)
        for (pid, comm) in processes {
            try Files.ensureDirectory(root + "/" + pid)
            try Files.writeAtomically(Array((comm + "\n").utf8), to: root + "/" + pid + "/comm")
            created += [root + "/" + pid, root + "/" + pid + "/comm"]
        }
        try Files.ensureDirectory(root + "/self") // non-numeric entries are ignored
        created.append(root + "/self")
        return root
    }

    func testDetectsBluetoothdAndNamesTheFix() throws {
        let root = try fakeProc(["1": "systemd", "412": "bluetoothd", "90": "dbus-daemon", "2000": "bluetoothd-helper"])
        let detector = BluetoothdDetector(procRoot: root)
        XCTAssertEqual(detector.runningPID(), 412)
        XCTAssertThrowsError(try detector.check()) { error in
            let message = "\(error)"
            XCTAssertTrue(message.contains("systemctl disable --now bluetooth"), message)
            XCTAssertTrue(message.contains("ATT connections"), message)
        }
    }

    func testNoBluetoothdPasses() throws {
        let detector = BluetoothdDetector(procRoot: try fakeProc(["1": "init", "7": "carkey-agent"]))
        XCTAssertNil(detector.runningPID())
        XCTAssertNoThrow(try detector.check())
        XCTAssertNil(BluetoothdDetector(procRoot: "/nonexistent-proc").runningPID())
    }

    func testScannerStartsReportsAndRestartsDiscovery() throws {
        var core = ScannerCore(index: 1)
        XCTAssertNil(core.nextCommand(nowMillis: 0))
        core.start()
        XCTAssertEqual(bluezHex(core.nextCommand(nowMillis: 0)!.encoded), "23 00 01 00 01 00 06")
        XCTAssertNil(core.nextCommand(nowMillis: 0))
        core.receive(try MgmtEvent.parse(bluezBytes("01 00 01 00 04 00 23 00 00 06"))!, nowMillis: 10)
        XCTAssertTrue(core.discovering)
        let found = "12 00 01 00 35 00 00 00 00 01 aa 00 01 7f 00 00 00 00 27 00 02 01 06 "
            + "11 07 79 65 4b 72 61 43 6e 65 70 4f 4b 0c 01 00 de c0 09 ff ff ff 11 22 33 44 55 66 "
            + "07 09 43 61 72 4b 65 79"
        core.receive(try MgmtEvent.parse(bluezBytes(found))!, nowMillis: 20)
        // Truncated AD data in a well-formed event: skipped and counted.
        core.receive(MgmtEvent(controllerIndex: 1, body: .deviceFound(MgmtDeviceFound(
            address: MgmtVectors.hci0Address, addressType: .lePublic, rssi: -40, flags: 0, eir: [5, 9, 0x41]))), nowMillis: 21)
        let seen = core.takeAdvertisements()
        XCTAssertEqual(seen.count, 1)
        XCTAssertEqual(core.malformedCount, 1)
        XCTAssertEqual(seen.first?.address, MgmtVectors.hci0Address)
        XCTAssertNil(seen.first?.rssi) // 127: not available (btvirt)
        XCTAssertEqual(seen.first?.parsed.carIdentifier, MgmtVectors.identifier)
        XCTAssertEqual(seen.first?.parsed.name, "CarKey")
        // The kernel ends the discovery window: the core starts another.
        core.receive(try MgmtEvent.parse(bluezBytes("13 00 01 00 02 00 06 00"))!, nowMillis: 10_300)
        XCTAssertEqual(core.nextCommand(nowMillis: 10_300)?.opcode, .startDiscovery)
        // Busy (someone else is discovering): retried after the pause, not at once.
        core.receive(try MgmtEvent.parse(bluezBytes("01 00 01 00 04 00 23 00 0a 06"))!, nowMillis: 10_310)
        XCTAssertEqual(core.lastError, .commandFailed(.startDiscovery, .busy))
        XCTAssertNil(core.nextCommand(nowMillis: 10_500))
        XCTAssertEqual(core.nextCommand(nowMillis: 11_310)?.opcode, .startDiscovery)
        core.receive(try MgmtEvent.parse(bluezBytes("01 00 01 00 04 00 23 00 00 06"))!, nowMillis: 11_320)
        core.stop()
        XCTAssertEqual(bluezHex(core.nextCommand(nowMillis: 11_400)!.encoded), "24 00 01 00 01 00 06")
        core.receive(try MgmtEvent.parse(bluezBytes("01 00 01 00 04 00 24 00 00 06"))!, nowMillis: 11_410)
        XCTAssertFalse(core.discovering)
        XCTAssertNil(core.nextCommand(nowMillis: 20_000))
    }

    /// A discovery that saw nothing is stopped and started again after the window (btvirt sends
    /// an advertiser's report once per scan enable; the kernel drops one that arrives before
    /// the discovery is active).
    func testScannerRestartsADiscoveryAfterItsWindow() throws {
        var core = ScannerCore(index: 1, restartMillis: 1_500)
        core.start()
        XCTAssertEqual(core.nextCommand(nowMillis: 0)?.opcode, .startDiscovery)
        core.receive(try MgmtEvent.parse(bluezBytes("01 00 01 00 04 00 23 00 00 06"))!, nowMillis: 100)
        XCTAssertNil(core.nextCommand(nowMillis: 1_599))
        XCTAssertEqual(bluezHex(core.nextCommand(nowMillis: 1_600)!.encoded), "24 00 01 00 01 00 06")
        core.receive(try MgmtEvent.parse(bluezBytes("01 00 01 00 04 00 24 00 00 06"))!, nowMillis: 1_610)
        XCTAssertFalse(core.discovering)
        XCTAssertEqual(core.nextCommand(nowMillis: 1_610)?.opcode, .startDiscovery)
        core.receive(try MgmtEvent.parse(bluezBytes("01 00 01 00 04 00 23 00 00 06"))!, nowMillis: 1_620)
        XCTAssertTrue(core.discovering)
        XCTAssertNil(core.nextCommand(nowMillis: 3_000))
        // 0 turns it off: one discovery until the kernel ends it.
        var steady = ScannerCore(index: 1, restartMillis: 0)
        steady.start()
        _ = steady.nextCommand(nowMillis: 0)
        steady.receive(try MgmtEvent.parse(bluezBytes("01 00 01 00 04 00 23 00 00 06"))!, nowMillis: 10)
        XCTAssertNil(steady.nextCommand(nowMillis: 9_000))
    }
}

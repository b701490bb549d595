// The Bluetooth LE lane against the real kernel stack: scripts/ble-vm/run-lane.sh boots the
// Debian kernel under qemu (virtme-ng), starts btvirt's virtual controllers and runs the built
// carkey-agent on hci0 and `carkey phone --ble` on fresh centrals (scenarios.sh). The lane
// retries its set-up (a slow btvirt start) by booting again; it never retries a scenario.
//
// Needs root and `make deps` (kernel image, qemu, busybox-static, bluez-test-tools, bluez,
// virtme-ng). Without them the test is skipped with the reason, except under CI (CI=true),
// where a missing prerequisite is a failure: CI installs them. CARKEY_BLE_LANE=0 skips it.
import XCTest
#if canImport(Glibc)
import Glibc
#endif

final class BLEVirtualMachineTests: XCTestCase {
    /// Every scenario the lane must report as ok (scripts/ble-vm/scenarios.sh).
    static let scenarios = ["start", "enroll", "unlock", "lock", "share", "link-loss", "car-close", "handshake-deadline",
                            "power-cycle", "stop", "bluetoothd"]

    private static var repositoryRoot: String { Subprocess.repositoryRoot }

    private static func environment(_ name: String) -> String? {
        getenv(name).map { String(cString: $0) }
    }

    func testTheAgentServesPhonesOverTheKernelBluetoothStack() throws {
        if Self.environment("CARKEY_BLE_LANE") == "0" { throw XCTSkip("CARKEY_BLE_LANE=0") }
        let underCI = Self.environment("CI").map { !$0.isEmpty && $0 != "0" && $0 != "false" } ?? false
        let results = Subprocess.makeTemporaryDirectory()
        let result = try Subprocess.run(Self.repositoryRoot + "/scripts/ble-vm/run-lane.sh",
                                        ["--bin", Subprocess.productsDirectory, "--results", results])
        // The figures (set-up, scan to unlock, round trips) belong in the test log.
        print(result.stdout, terminator: "")
        if result.status == 2 {
            Subprocess.removeTree(results)
            let reason = "BLE lane prerequisites missing: " + result.stdout.split(separator: "\n").joined(separator: "; ")
            if underCI { XCTFail(reason) } else { throw XCTSkip(reason) }
            return
        }
        XCTAssertNotEqual(result.status, 3, "the VM set-up failed on every attempt; logs in \(results)")
        let lines = result.stdout.split(separator: "\n").map(String.init)
        for scenario in Self.scenarios {
            let line = lines.first { $0.hasPrefix("ble-lane: \(scenario) ") }
            XCTAssertNotNil(line, "no result for \(scenario); logs in \(results)")
            if let line { XCTAssertTrue(line.hasPrefix("ble-lane: \(scenario) ok"), line) }
        }
        XCTAssertTrue(lines.contains { $0.hasPrefix("ble-lane-time: scan start to unlock response") }, result.stdout)
        XCTAssertEqual(result.status, 0, "logs in \(results)\n\(result.stderr)")
        if result.status == 0 { Subprocess.removeTree(results) }
    }
}

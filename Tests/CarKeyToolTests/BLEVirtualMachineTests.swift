// The Bluetooth LE lane against the real kernel stack: scripts/ble-vm/run-lane.sh boots the
// Debian kernel under qemu (virtme-ng), starts btvirt's virtual controllers and runs the built
// carkey-agent on hci0 and `carkey phone --ble` on fresh centrals (scenarios.sh). The lane
// retries its set-up (a slow btvirt start) by booting again; it never retries a scenario.
// The same lane on Debian's arm64 kernel with the static aarch64 binaries: Arm64VirtualMachineTests.
//
// Needs root and `make deps` (kernel image, qemu, busybox-static, bluez-test-tools, bluez,
// virtme-ng). Without them the test is skipped with the reason, except under CI (CI=true),
// where a missing prerequisite is a failure: CI installs them. CARKEY_BLE_LANE=0 skips it.
import XCTest

final class BLEVirtualMachineTests: XCTestCase {
    /// Every scenario the lane must report as ok (scripts/ble-vm/scenarios.sh).
    static let scenarios = ["start", "enroll", "unlock", "lock", "share", "link-loss", "car-close", "handshake-deadline",
                            "power-cycle", "stop", "bluetoothd"]

    func testTheAgentServesPhonesOverTheKernelBluetoothStack() throws {
        if VirtualMachineLane.environment("CARKEY_BLE_LANE") == "0" { throw XCTSkip("CARKEY_BLE_LANE=0") }
        try VirtualMachineLane.check(script: "scripts/ble-vm/run-lane.sh", ["--bin", Subprocess.productsDirectory],
                                     prefix: "ble-lane", scenarios: Self.scenarios,
                                     timeLine: "scan start to unlock response", required: VirtualMachineLane.underCI,
                                     requiredBy: "CI=true")
    }
}

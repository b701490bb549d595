// The shipped aarch64 binaries on an ARM kernel: the BLE and GPIO lanes with --arch arm64 boot
// Debian 12's arm64 kernel under qemu-system-aarch64 (TCG) with virtme-ng and an arm64 root of
// bookworm packages (scripts/arm64-vm/setup.sh, cached), and run build/aarch64's static
// carkey-agent and carkey in it: the BLE scenarios on btvirt controllers (hci_vhci cross-built,
// Debian's arm64 kernel lacks it), and on gpio-sim (cross-built likewise) the agent holding its
// board's lines, pulsing them for a phone, seeing door edges and naming a busy line's holder.
//
// Needs root, make deps (qemu-system-arm, gcc-aarch64-linux-gnu, linux-source-6.1, the kbuild
// tools, virtme-ng) and `make static-aarch64`. Without them the tests skip with the reason;
// under CI=true or CARKEY_REQUIRE_AARCH64=1 that is a failure. CARKEY_ARM64_LANE=0 skips them.
import XCTest

final class Arm64VirtualMachineTests: XCTestCase {
    static let gpioChecks = ["lines", "pulse-unlock", "pulse-lock", "edges", "busy"]

    private var binaries: String { Subprocess.repositoryRoot + "/build/aarch64" }
    private var required: Bool { VirtualMachineLane.underCI || VirtualMachineLane.environment("CARKEY_REQUIRE_AARCH64") == "1" }
    private var requiredBy: String { VirtualMachineLane.underCI ? "CI=true" : "CARKEY_REQUIRE_AARCH64=1" }

    override func setUpWithError() throws {
        if VirtualMachineLane.environment("CARKEY_ARM64_LANE") == "0" { throw XCTSkip("CARKEY_ARM64_LANE=0") }
    }

    func testTheAarch64AgentServesPhonesOverAnArm64KernelsBluetoothStack() throws {
        try VirtualMachineLane.check(script: "scripts/ble-vm/run-lane.sh", ["--arch", "arm64", "--bin", binaries, "--timeout", "1800"],
                                     prefix: "ble-lane", scenarios: BLEVirtualMachineTests.scenarios,
                                     timeLine: "scan start to unlock response", required: required, requiredBy: requiredBy)
    }

    func testTheAarch64AgentDrivesGPIOSimOnAnArm64Kernel() throws {
        try VirtualMachineLane.check(script: "scripts/gpio-vm/run-lane.sh", ["--arch", "arm64", "--bin", binaries],
                                     prefix: "gpio-lane", scenarios: Self.gpioChecks,
                                     timeLine: "checks", required: required, requiredBy: requiredBy)
    }
}

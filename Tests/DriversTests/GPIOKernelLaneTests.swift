// The GPIO lane from the host: scripts/gpio-vm/run-lane.sh boots the Debian kernel under qemu
// (virtme-ng) with gpio-sim loaded and runs this very test bundle's GPIOKernelTests inside it,
// so the libgpiod backend this build compiled (v1 on Debian 12) drives real GPIO character
// devices. Each kernel test is one `gpio-lane: NAME ok|FAIL` line; all must be ok.
//
// Needs root, virtme-ng, qemu and a kernel image (make deps), plus the kernel's headers and
// Debian's linux-source package to build gpio-sim (the lane installs them when missing).
// Without them the test is skipped with the reason, except under CI (CI=true), where that is
// a failure. CARKEY_GPIO_LANE=0 skips it.
#if canImport(Glibc)
import Glibc
#endif
import XCTest
import TestHarness

final class GPIOKernelLaneTests: XCTestCase {
    /// Every test of GPIOKernelTests, each of which the lane must report as ok.
    static let scenarios = [
        "testOutputStartsInactiveWithItsDirectionAndDrives", "testActiveLowOutputRestsHighAndDrivesLow",
        "testPulseIsSeenOnTheLine", "testInputReportsEdgesFromThePull", "testActiveLowInputIsActiveWhenPulledLow",
        "testBiasReachesTheChip", "testBusyLineNamesTheOtherHolder", "testChipByLabelNameAndPathIsTheSameChip",
        "testMissingChipsAndLinesAreNamed", "testReleaseAndCloseGiveLinesBack", "testLinkedLibraryMatchesTheCompiledAPI",
    ]

    private static func environment(_ name: String) -> String? { getenv(name).map { String(cString: $0) } }

    func testTheBackendDrivesGPIOSimInTheDebianKernel() throws {
        if Self.environment("CARKEY_GPIO_LANE") == "0" { throw XCTSkip("CARKEY_GPIO_LANE=0") }
        // Inside the lane itself this bundle runs only GPIOKernelTests, never this test.
        if Self.environment("CARKEY_GPIO_KERNEL") != nil { throw XCTSkip("inside the lane") }
        let underCI = Self.environment("CI").map { !$0.isEmpty && $0 != "0" && $0 != "false" } ?? false
        let results = TestFolders.make()
        let (status, output) = try Self.run(GPIOFixtures.repositoryRoot + "/scripts/gpio-vm/run-lane.sh",
                                            ["--bundle", Self.bundlePath(), "--results", results])
        print(output)   // the set-up line and the time belong in the test log
        if status == 2 {
            let reason = "GPIO lane prerequisites missing: " + output.split(separator: "\n").joined(separator: "; ")
            TestFolders.remove(results)
            if underCI { XCTFail(reason) } else { throw XCTSkip(reason) }
            return
        }
        // The lane's own lines go into every message: CI shows failure messages, not all output.
        let summary = Self.tail(output)
        XCTAssertNotEqual(status, 3, "the VM set-up failed; logs in \(results): \(summary)")
        let lines = output.split(separator: "\n").map(String.init)
        for scenario in Self.scenarios {
            let line = lines.first { $0.hasPrefix("gpio-lane: \(scenario) ") }
            XCTAssertNotNil(line, "no result for \(scenario); logs in \(results): \(summary)")
            if let line { XCTAssertTrue(line.hasPrefix("gpio-lane: \(scenario) ok"), line) }
        }
        XCTAssertTrue(lines.contains("gpio-lane-end") || output.contains("complete"), output)
        XCTAssertEqual(status, 0, "logs in \(results): \(summary)")
        if status == 0 { TestFolders.remove(results) }
    }

    /// The last lines of the lane's output, on one line, for a failure message.
    private static func tail(_ output: String) -> String {
        output.split(separator: "\n").suffix(8).joined(separator: " | ")
    }

    /// This process's executable: the test bundle the lane runs in the guest.
    private static func bundlePath() -> String {
        var buffer = [CChar](repeating: 0, count: 4096)
        let n = readlink("/proc/self/exe", &buffer, buffer.count - 1)
        return String(decoding: buffer[0..<max(n, 0)].map { UInt8(bitPattern: $0) }, as: UTF8.self)
    }

    /// Runs a script with stdout and stderr into one file (no pipe to fill); status and text.
    static func run(_ path: String, _ arguments: [String]) throws -> (Int32, String) {
        let folder = TestFolders.make()
        defer { TestFolders.remove(folder) }
        let outPath = folder + "/output"
        var actions = posix_spawn_file_actions_t()
        posix_spawn_file_actions_init(&actions)
        defer { posix_spawn_file_actions_destroy(&actions) }
        posix_spawn_file_actions_addopen(&actions, 0, "/dev/null", O_RDONLY, 0)
        posix_spawn_file_actions_addopen(&actions, 1, outPath, O_WRONLY | O_CREAT | O_TRUNC, 0o600)
        posix_spawn_file_actions_adddup2(&actions, 1, 2)
        let argv = ([path] + arguments).map { strdup($0) } + [nil]
        defer { argv.forEach { free($0) } }
        var pid: pid_t = 0
        let spawned = posix_spawn(&pid, path, &actions, nil, argv, environ)
        guard spawned == 0 else { throw GPIOSimError("posix_spawn \(path): \(spawned)") }
        var status: Int32 = 0
        while waitpid(pid, &status, 0) < 0 && errno == EINTR {}
        let exitStatus = (status & 0x7f) == 0 ? (status >> 8) & 0xff : 128 + (status & 0x7f)
        return (exitStatus, try GPIOSimChips.read(outPath))
    }
}

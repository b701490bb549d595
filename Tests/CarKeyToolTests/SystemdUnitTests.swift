// board/systemd/carkey-agent.service passes `systemd-analyze verify` (with ExecStart pointed at
// the built binary, which verify requires to exist), and keeps the settings the agent relies on:
// notify and watchdog, the non-root user with its device groups, the two Bluetooth capabilities.
import XCTest
import Drivers
#if canImport(Glibc)
import Glibc
#endif

final class SystemdUnitTests: XCTestCase {
    private static var repositoryRoot: String { Subprocess.repositoryRoot }

    func testTheUnitVerifiesAndIsANotifyServiceWithAWatchdog() throws {
        let unit = String(decoding: try Files.read(Self.repositoryRoot + "/board/systemd/carkey-agent.service", limit: 1 << 16), as: UTF8.self)
        // Whole lines, not substrings: "User=carkey" must not be satisfied by a comment.
        let lines = Set(unit.split(separator: "\n").map(String.init).filter { !$0.hasPrefix("#") })
        for line in ["Type=notify", "WatchdogSec=10s", "Restart=on-failure", "RestartPreventExitStatus=78", "StateDirectory=opencarkey", "StateDirectoryMode=0700",
                     "NoNewPrivileges=yes", "ProtectSystem=strict", "PrivateTmp=yes", "Conflicts=bluetooth.service",
                     // No root: the system user from carkey-agent.sysusers, devices through groups.
                     "User=carkey", "Group=carkey", "SupplementaryGroups=gpio spi dialout tss",
                     // Only what the Bluetooth management socket needs, ambient because the user is not root.
                     "CapabilityBoundingSet=CAP_NET_ADMIN CAP_NET_RAW", "AmbientCapabilities=CAP_NET_ADMIN CAP_NET_RAW",
                     "DevicePolicy=closed", "DeviceAllow=char-gpiochip rw", "DeviceAllow=char-spidev rw",
                     // The TPM's resource manager for the tpm2 key vault (issue 18); never the raw /dev/tpm0.
                     "DeviceAllow=char-tpmrm rw"] {
            XCTAssertTrue(lines.contains(line), "the unit has the line \(line)")
        }
        let keys = lines.compactMap { $0.split(separator: "=", maxSplits: 1).first.map(String.init) }
        XCTAssertEqual(keys.filter { $0 == "User" }.count, 1, "one User= line")
        XCTAssertFalse(keys.contains("ProtectClock"), "its system-call filter would refuse the agent's read-only adjtimex")
        XCTAssertFalse(keys.contains("PrivateDevices"), "the agent needs gpiochip, spidev and the console tty")
        XCTAssertFalse(lines.contains("DeviceAllow=char-tpm rw"), "the raw TPM device would keep the store tools out")
        guard access("/usr/bin/systemd-analyze", X_OK) == 0 else { throw XCTSkip("systemd-analyze is not installed") }
        let folder = Subprocess.makeTemporaryDirectory()
        defer { Subprocess.removeTree(folder) }
        let agent = Subprocess.productsDirectory + "/carkey-agent"
        let local = unit.replacingOccurrences(of: "/usr/bin/carkey-agent", with: agent)
        try Files.writeAtomically(Array(local.utf8), to: folder + "/carkey-agent.service", mode: 0o644)
        let result = try Subprocess.run("/usr/bin/systemd-analyze", ["verify", "--man=no", folder + "/carkey-agent.service"])
        XCTAssertEqual(result.status, 0, result.stdout + result.stderr)
        // Warnings are findings too (an unknown key is only a warning).
        let findings = (result.stdout + result.stderr).split(separator: "\n").filter { $0.contains("carkey-agent.service") }
        XCTAssertEqual(findings, [], "systemd-analyze: \(findings)")
    }
}

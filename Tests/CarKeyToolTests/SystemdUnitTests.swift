// board/systemd/carkey-agent.service passes `systemd-analyze verify` (with ExecStart pointed at
// the built binary, which verify requires to exist), and keeps the settings the agent relies on.
import XCTest
import Drivers
#if canImport(Glibc)
import Glibc
#endif

final class SystemdUnitTests: XCTestCase {
    private static var repositoryRoot: String {
        var parts = String(#filePath).split(separator: "/", omittingEmptySubsequences: false)
        parts.removeLast(3)
        return parts.joined(separator: "/")
    }

    func testTheUnitVerifiesAndIsANotifyServiceWithAWatchdog() throws {
        let unit = String(decoding: try Files.read(Self.repositoryRoot + "/board/systemd/carkey-agent.service", limit: 1 << 16), as: UTF8.self)
        for line in ["Type=notify", "WatchdogSec=", "StateDirectory=opencarkey", "NoNewPrivileges=yes", "ProtectSystem=strict",
                     "CapabilityBoundingSet=CAP_NET_ADMIN CAP_NET_RAW", "Conflicts=bluetooth.service"] {
            XCTAssertTrue(unit.contains(line), "the unit has \(line)")
        }
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

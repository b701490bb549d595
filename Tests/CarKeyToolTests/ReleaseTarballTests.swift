// `make release` (scripts/release/tarball.sh): the tarballs the Yocto recipe fetches. Checked
// with stand-in static binaries (busybox-static is a static x86-64 ELF, which is all the script
// looks at; /bin/ls stands in for the dynamically linked PKCS#11 bridge): the recipe's files
// are inside under carkey-agent-VERSION/, the checksum line comes out, two runs give the same
// bytes, a dynamic agent and a missing bridge are refused.
import XCTest

final class ReleaseTarballTests: XCTestCase {
    private static var root: String { Subprocess.repositoryRoot }
    private static var script: String { root + "/scripts/release/tarball.sh" }
    private static let staticStandIn = "/bin/busybox"

    private func binaries(from source: String, in folder: String) throws -> String {
        let bin = folder + "/bin"
        XCTAssertEqual(try Subprocess.run("/bin/mkdir", ["-p", bin]).status, 0)
        for name in ["carkey-agent", "carkey"] {
            XCTAssertEqual(try Subprocess.run("/bin/cp", [source, bin + "/" + name]).status, 0)
        }
        XCTAssertEqual(try Subprocess.run("/bin/cp", ["/bin/ls", bin + "/carkey-pkcs11-bridge"]).status, 0)
        return bin
    }

    func testTheTarballHoldsWhatTheRecipeInstallsAndIsReproducible() throws {
        guard access(Self.staticStandIn, X_OK) == 0 else { throw XCTSkip("busybox-static is not installed") }
        let folder = Subprocess.makeTemporaryDirectory()
        defer { Subprocess.removeTree(folder) }
        let bin = try binaries(from: Self.staticStandIn, in: folder)
        let first = try Subprocess.run(Self.script, ["--out", folder + "/a", "--x86_64", bin, "--aarch64", folder + "/none"])
        XCTAssertEqual(first.status, 0, first.stderr)
        XCTAssertTrue(first.stdout.contains("aarch64 skipped"), first.stdout)
        let checksum = first.stdout.split(separator: "\n").first { $0.hasPrefix("SRC_URI[x86_64.sha256sum] = \"") }
        XCTAssertNotNil(checksum, first.stdout)

        let version = try Subprocess.run("/bin/sed", ["-n", "s/.*static let version = \"\\(.*\\)\".*/\\1/p",
                                                      Self.root + "/Sources/Protocol/BuildInfo.swift"]).stdout
            .trimmingCharacters(in: .whitespacesAndNewlines)
        let tarball = folder + "/a/carkey-agent-\(version)-x86_64.tar.gz"
        let listing = try Subprocess.run("/bin/tar", ["-tvzf", tarball])
        XCTAssertEqual(listing.status, 0, listing.stderr)
        for path in ["bin/carkey-agent", "bin/carkey", "libexec/opencarkey/carkey-pkcs11-bridge", "board/systemd/carkey-agent.service", "board/systemd/carkey-agent.sysusers",
                     "board/udev/60-opencarkey.rules", "board/agent.example.json", "board/overlays/opencarkey-dwm3000-rpi.dts"] {
            XCTAssertTrue(listing.stdout.contains(" carkey-agent-\(version)/\(path)\n"), "\(path) missing:\n\(listing.stdout)")
        }
        XCTAssertTrue(listing.stdout.contains("-rwxr-xr-x 0/0"), "binaries are 0755 root:\n\(listing.stdout)")
        XCTAssertFalse(listing.stdout.contains(".build/"), "no build products beyond the two binaries")

        let second = try Subprocess.run(Self.script, ["--out", folder + "/b", "--x86_64", bin, "--aarch64", folder + "/none"])
        XCTAssertEqual(second.status, 0, second.stderr)
        let compare = try Subprocess.run("/usr/bin/cmp", [tarball, folder + "/b/carkey-agent-\(version)-x86_64.tar.gz"])
        XCTAssertEqual(compare.status, 0, "two runs differ: \(compare.stdout)")
    }

    func testADynamicBinaryIsRefused() throws {
        let folder = Subprocess.makeTemporaryDirectory()
        defer { Subprocess.removeTree(folder) }
        let bin = try binaries(from: "/bin/ls", in: folder)
        let result = try Subprocess.run(Self.script, ["--out", folder + "/out", "--x86_64", bin, "--aarch64", folder + "/none"])
        XCTAssertNotEqual(result.status, 0)
        XCTAssertTrue(result.stderr.contains("is not a static x86_64 executable"), result.stderr)
        let made = try Subprocess.run("/usr/bin/find", [folder + "/out", "-name", "*.tar.gz"])
        XCTAssertEqual(made.stdout, "", "nothing is written for a refused architecture")
    }

    func testAMissingBridgeIsRefused() throws {
        guard access(Self.staticStandIn, X_OK) == 0 else { throw XCTSkip("busybox-static is not installed") }
        let folder = Subprocess.makeTemporaryDirectory()
        defer { Subprocess.removeTree(folder) }
        let bin = try binaries(from: Self.staticStandIn, in: folder)
        XCTAssertEqual(unlink(bin + "/carkey-pkcs11-bridge"), 0)
        let result = try Subprocess.run(Self.script, ["--out", folder + "/out", "--x86_64", bin, "--aarch64", folder + "/none"])
        XCTAssertEqual(result.status, 1)
        XCTAssertTrue(result.stderr.contains("no \(bin)/carkey-pkcs11-bridge"), result.stderr)
    }

    func testNoBinariesAtAllIsAnError() throws {
        let folder = Subprocess.makeTemporaryDirectory()
        defer { Subprocess.removeTree(folder) }
        let result = try Subprocess.run(Self.script, ["--out", folder + "/out", "--x86_64", folder + "/none", "--aarch64", folder + "/none"])
        XCTAssertEqual(result.status, 1)
        XCTAssertTrue(result.stderr.contains("no architecture had binaries"), result.stderr)
    }
}

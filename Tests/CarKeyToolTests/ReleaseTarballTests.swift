// `make release` (scripts/release/tarball.sh): the tarballs the Yocto recipe fetches. Checked
// with stand-in static binaries (busybox-static is a static x86-64 ELF, which is all the script
// looks at; /bin/ls stands in for the dynamically linked PKCS#11 bridge) and a stand-in link
// map naming two Debian archives: the recipe's files, the bridge, LICENSE and the notices are
// inside under carkey-agent-VERSION/, the SBOM is beside it, the checksum line comes out, two
// runs give the same bytes, and a dynamic agent, a missing bridge, a missing map, a GPL-only
// member and a LICENSE the recipe's LIC_FILES_CHKSUM does not match are refused. The relink
// kit is left out here (--objects none): RelinkKitTests makes one from the real objects.
import XCTest

final class ReleaseTarballTests: XCTestCase {
    private static var root: String { Subprocess.repositoryRoot }
    private static var script: String { root + "/scripts/release/tarball.sh" }
    private static let staticStandIn = "/bin/busybox"

    private func binaries(from source: String, in folder: String, archives: [String] = ["libgpiod.a", "libc.a"]) throws -> String {
        let bin = folder + "/bin"
        XCTAssertEqual(try Subprocess.run("/bin/mkdir", ["-p", bin]).status, 0)
        var map = "Archive member included because of file (symbol)\n\n"
        for archive in archives {
            map += "/usr/lib/x86_64-linux-gnu/\(archive)(member.o)\n    /src/.build/release/Drivers.build/Backend.swift.o (symbol)\n"
        }
        for name in ["carkey-agent", "carkey"] {
            XCTAssertEqual(try Subprocess.run("/bin/cp", [source, bin + "/" + name]).status, 0)
            try Subprocess.write(map, to: bin + "/" + name + ".map")
        }
        XCTAssertEqual(try Subprocess.run("/bin/cp", ["/bin/ls", bin + "/carkey-pkcs11-bridge"]).status, 0)
        return bin
    }

    private func release(_ bin: String, out: String) throws -> ProcessResult {
        try Subprocess.run(Self.script, ["--out", out, "--x86_64", bin, "--aarch64", out + "/none", "--objects", "none"])
    }

    private static var version: String {
        get throws {
            try Subprocess.run("/bin/sed", ["-n", "s/.*static let version = \"\\(.*\\)\".*/\\1/p",
                                            root + "/Sources/Protocol/BuildInfo.swift"]).stdout
                .trimmingCharacters(in: .whitespacesAndNewlines)
        }
    }

    func testTheTarballHoldsWhatTheRecipeInstallsAndIsReproducible() throws {
        guard access(Self.staticStandIn, X_OK) == 0 else { throw XCTSkip("busybox-static is not installed") }
        let folder = Subprocess.makeTemporaryDirectory()
        defer { Subprocess.removeTree(folder) }
        let bin = try binaries(from: Self.staticStandIn, in: folder)
        let first = try release(bin, out: folder + "/a")
        XCTAssertEqual(first.status, 0, first.stderr)
        XCTAssertTrue(first.stdout.contains("aarch64 skipped"), first.stdout)
        let checksum = first.stdout.split(separator: "\n").first { $0.hasPrefix("SRC_URI[x86_64.sha256sum] = \"") }
        XCTAssertNotNil(checksum, first.stdout)

        let version = try Self.version
        let tarball = folder + "/a/carkey-agent-\(version)-x86_64.tar.gz"
        let listing = try Subprocess.run("/bin/tar", ["-tvzf", tarball])
        XCTAssertEqual(listing.status, 0, listing.stderr)
        for path in ["bin/carkey-agent", "bin/carkey", "libexec/opencarkey/carkey-pkcs11-bridge", "board/systemd/carkey-agent.service",
                     "board/systemd/carkey-agent.sysusers", "board/udev/60-opencarkey.rules", "board/agent.example.json",
                     "board/overlays/opencarkey-dwm3000-rpi.dts", "LICENSE", "THIRD-PARTY-NOTICES.txt"] {
            XCTAssertTrue(listing.stdout.contains(" carkey-agent-\(version)/\(path)\n"), "\(path) missing:\n\(listing.stdout)")
        }
        XCTAssertTrue(listing.stdout.contains("-rwxr-xr-x 0/0"), "binaries are 0755 root:\n\(listing.stdout)")
        XCTAssertFalse(listing.stdout.contains(".build/"), "no build products beyond the two binaries")

        let notices = try Subprocess.run("/bin/tar", ["-xOzf", tarball, "carkey-agent-\(version)/THIRD-PARTY-NOTICES.txt"]).stdout
        XCTAssertTrue(notices.contains("\n  libgpiod "), notices)
        XCTAssertTrue(notices.contains("\n  GNU C Library "), notices)
        XCTAssertTrue(access(folder + "/a/carkey-agent-\(version)-x86_64.spdx.json", R_OK) == 0, "the SBOM beside the tarball")
        XCTAssertTrue(first.stdout.contains("x86_64: no relink kit"), first.stdout)

        let second = try release(bin, out: folder + "/b")
        XCTAssertEqual(second.status, 0, second.stderr)
        for name in ["x86_64.tar.gz", "x86_64.spdx.json"] {
            let compare = try Subprocess.run("/usr/bin/cmp", [folder + "/a/carkey-agent-\(version)-\(name)", folder + "/b/carkey-agent-\(version)-\(name)"])
            XCTAssertEqual(compare.status, 0, "two runs differ: \(compare.stdout)")
        }
    }

    func testBinariesWithoutLinkMapsOrWithAGPLOnlyMemberAreRefused() throws {
        guard access(Self.staticStandIn, X_OK) == 0 else { throw XCTSkip("busybox-static is not installed") }
        let folder = Subprocess.makeTemporaryDirectory()
        defer { Subprocess.removeTree(folder) }
        let bin = try binaries(from: Self.staticStandIn, in: folder + "/gpl", archives: ["libgpiod.a", "libbluetooth.a"])
        let gpl = try release(bin, out: folder + "/out")
        XCTAssertEqual(gpl.status, 1)
        XCTAssertTrue(gpl.stderr.contains("libbluetooth.a(member.o) is GPL-only code in the binary"), gpl.stderr)
        let unmapped = try binaries(from: Self.staticStandIn, in: folder + "/unmapped")
        XCTAssertEqual(try Subprocess.run("/bin/rm", [unmapped + "/carkey.map"]).status, 0)
        let missing = try release(unmapped, out: folder + "/out")
        XCTAssertEqual(missing.status, 1)
        XCTAssertTrue(missing.stderr.contains("no link map \(unmapped)/carkey.map"), missing.stderr)
        XCTAssertEqual(try Subprocess.run("/usr/bin/find", [folder + "/out", "-name", "*.tar.gz"]).stdout, "", "nothing shipped")
    }

    /// bitbake stops at do_populate_lic when LICENSE's md5 is not the recipe's LIC_FILES_CHKSUM;
    /// the checksum script stops the release first.
    func testATarballWhoseLicenseDiffersFromTheRecipesChecksumIsRefused() throws {
        guard access(Self.staticStandIn, X_OK) == 0 else { throw XCTSkip("busybox-static is not installed") }
        let folder = Subprocess.makeTemporaryDirectory()
        defer { Subprocess.removeTree(folder) }
        let bin = try binaries(from: Self.staticStandIn, in: folder)
        XCTAssertEqual(try release(bin, out: folder + "/a").status, 0)
        let version = try Self.version
        let top = "carkey-agent-\(version)"
        let repack = """
            set -e; cd "$1"; mkdir x; tar -xzf a/\(top)-x86_64.tar.gz -C x
            echo "an extra line" >> x/\(top)/LICENSE; tar -czf \(top)-x86_64.tar.gz -C x \(top)
            """
        XCTAssertEqual(try Subprocess.run("/bin/bash", ["-c", repack, "repack", folder]).status, 0)
        let checksums = Self.root + "/yocto/scripts/release-checksums.sh"
        XCTAssertEqual(try Subprocess.run(checksums, [folder + "/a/\(top)-x86_64.tar.gz"]).status, 0)
        let changed = try Subprocess.run(checksums, [folder + "/\(top)-x86_64.tar.gz"])
        XCTAssertEqual(changed.status, 1)
        XCTAssertTrue(changed.stderr.contains("the recipe's LIC_FILES_CHKSUM says 3b83ef96387f14655fc854ddc3c6bd57"), changed.stderr)
    }

    func testADynamicBinaryIsRefused() throws {
        let folder = Subprocess.makeTemporaryDirectory()
        defer { Subprocess.removeTree(folder) }
        let bin = try binaries(from: "/bin/ls", in: folder)
        let result = try release(bin, out: folder + "/out")
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

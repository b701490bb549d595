// What ships under which licence (scripts/licensing): the GPL-only check, the third-party
// notices and the SPDX SBOM, all read from link maps. Crafted maps (a few lines in the linker's
// format naming this machine's Debian archives) test the tools on any Debian x86_64 host; the
// real maps `make static` writes are checked when build/static has them (skipped with the
// reason otherwise, a failure under CARKEY_REQUIRE_ARTIFACTS=1). The SBOM is validated with
// pyspdxtools from the venv `make deps` installs (/var/cache/opencarkey-spdx).
import XCTest
#if canImport(Glibc)
import Glibc
#endif

final class LicensingTests: XCTestCase {
    private static var root: String { Subprocess.repositoryRoot }
    private static var linked: String { root + "/scripts/licensing/linked.py" }
    private static var notices: String { root + "/scripts/licensing/notices.py" }
    private static var sbom: String { root + "/scripts/licensing/sbom.py" }
    private static var checkSBOM: String { root + "/scripts/licensing/check-sbom.sh" }
    private static let libdir = "/usr/lib/x86_64-linux-gnu"
    private static var required: Bool { getenv("CARKEY_REQUIRE_ARTIFACTS").map { String(cString: $0) } == "1" }

    /// The maps of `make static`, or a skip (a failure under CARKEY_REQUIRE_ARTIFACTS=1).
    private func staticMaps() throws -> [String] {
        let maps = ["carkey-agent", "carkey"].map { Self.root + "/build/static/\($0).map" }
        for map in maps where access(map, R_OK) != 0 {
            if Self.required { XCTFail("CARKEY_REQUIRE_ARTIFACTS=1 but \(map) is missing") }
            throw XCTSkip("no link map \(map): run `make static`")
        }
        return maps
    }

    /// A map in gold's format: one project object and a member of each archive named.
    private func craftedMap(in folder: String, archives: [String]) throws -> String {
        for archive in archives where access(archive, R_OK) != 0 && archive.hasPrefix(Self.libdir) {
            throw XCTSkip("\(archive) is not installed (its Debian -dev package)")
        }
        var text = "Archive member included because of file (symbol)\n\n"
        let object = "/src/.build/x86_64-unknown-linux-gnu/release/Drivers.build/Backend.swift.o"
        for archive in archives {
            text += "\(archive)(member.o)\n                              \(object) (some_symbol)\n"
        }
        text += "\nMemory map\n\n .text 0x1000 0x10 \(object)\n"
        let path = folder + "/crafted.map"
        try Subprocess.write(text, to: path)
        return path
    }

    private func debianVersion(_ package: String) throws -> String {
        try Subprocess.run("/usr/bin/dpkg-query", ["-W", "-f=${source:Version}", package]).stdout
    }

    // MARK: GPL-only libraries

    func testTheStaticBinariesLinkNoGPLOnlyLibrary() throws {
        let maps = try staticMaps()
        let result = try Subprocess.run(Self.linked, ["check-gpl"] + maps)
        XCTAssertEqual(result.status, 0, result.stderr)
        // The check reads members at all: libgpiod's are in both maps.
        for map in maps {
            XCTAssertTrue(try Subprocess.read(map).contains("/libgpiod.a(libgpiod_la-core.o)"), map)
        }
    }

    func testAMapWithALibbluetoothMemberFailsTheGPLCheckAndTheNotices() throws {
        let folder = Subprocess.makeTemporaryDirectory()
        defer { Subprocess.removeTree(folder) }
        let clean = try craftedMap(in: folder, archives: [Self.libdir + "/libgpiod.a"])
        XCTAssertEqual(try Subprocess.run(Self.linked, ["check-gpl", clean]).status, 0)

        let bluetooth = try craftedMap(in: folder, archives: [Self.libdir + "/libgpiod.a", Self.libdir + "/libbluetooth.a"])
        let check = try Subprocess.run(Self.linked, ["check-gpl", bluetooth])
        XCTAssertEqual(check.status, 1)
        XCTAssertTrue(check.stderr.contains("libbluetooth.a(member.o) is linked in: BlueZ library, GPL-2.0-or-later"), check.stderr)
        let notices = try Subprocess.run(Self.notices, ["--title", "t", "--out", folder + "/N.txt", bluetooth])
        XCTAssertEqual(notices.status, 1, notices.stdout)
        XCTAssertNotEqual(access(folder + "/N.txt", F_OK), 0, "no notices are written for a GPL-only link")
    }

    // MARK: notices

    func testTheNoticesNameEachLinkedLibraryWithItsDebianVersionAndLicenceText() throws {
        let maps = try staticMaps()
        let folder = Subprocess.makeTemporaryDirectory()
        defer { Subprocess.removeTree(folder) }
        let out = folder + "/THIRD-PARTY-NOTICES.txt"
        let result = try Subprocess.run(Self.notices, ["--title", "test", "--out", out] + maps)
        XCTAssertEqual(result.status, 0, result.stderr)
        let text = try Subprocess.read(out)
        // Each library the static link is known to take members from, with its version.
        let expected = ["OpenSSL": "libssl-dev", "SQLite": "libsqlite3-dev", "libgpiod": "libgpiod-dev",
                        "GNU C Library": "libc6-dev", "GCC runtime libraries": "libstdc++-12-dev",
                        "Eclipse Mosquitto client library": "libmosquitto-dev"]
        for (name, package) in expected {
            let version = try debianVersion(package)
            XCTAssertTrue(text.contains("\n  \(name) \(version): "), "\(name) \(version) in the list")
            let copyright = try Subprocess.read("/usr/share/doc/\(package)/copyright")
            let line = try XCTUnwrap(copyright.split(separator: "\n").first { $0.count > 30 }, package)
            XCTAssertTrue(text.contains(line), "\(package)'s copyright text: \(line)")
        }
        XCTAssertTrue(text.contains("Swift runtime and standard library"), "the Swift runtime")
        XCTAssertTrue(text.contains("Runtime Library Exception"), "the Swift licence's exception text")
        XCTAssertTrue(text.contains("/usr/share/common-licenses/LGPL-2.1 (referred to above)"), "the LGPL text itself")
        XCTAssertFalse(text.contains("BlueZ"), "libbluetooth's headers only: not in the notices")
    }

    func testAnArchiveNoTableAccountsForStopsTheNotices() throws {
        let folder = Subprocess.makeTemporaryDirectory()
        defer { Subprocess.removeTree(folder) }
        let known = try craftedMap(in: folder, archives: [Self.libdir + "/libgpiod.a", Self.libdir + "/libc.a"])
        let good = try Subprocess.run(Self.notices, ["--title", "t", "--out", folder + "/N.txt", known])
        XCTAssertEqual(good.status, 0, good.stderr)
        XCTAssertTrue(try Subprocess.read(folder + "/N.txt").contains("libgpiod \(try debianVersion("libgpiod-dev")): LGPL-2.1-or-later"))

        let unknown = try craftedMap(in: folder, archives: [Self.libdir + "/libgpiod.a", "/opt/vendor/lib/libmystery.a"])
        let bad = try Subprocess.run(Self.notices, ["--title", "t", "--out", folder + "/M.txt", unknown])
        XCTAssertNotEqual(bad.status, 0)
        XCTAssertTrue(bad.stderr.contains("inputs no table accounts for:\n  /opt/vendor/lib/libmystery.a"), bad.stderr)
    }

    // MARK: cross links

    /// A cross link's tree: a prefix the map names, the folder it is here (one archive,
    /// libgpiod.a, with the given bytes), a package index giving `digest` for it, and the
    /// link-roots.tsv beside the map that ties them together (as scripts/aarch64/build.sh does).
    private func crossTree(in folder: String, digest: String) throws -> String {
        let host = folder + "/tree"
        try FileManager.default.createDirectory(atPath: host + "/usr/lib/aarch64-linux-gnu", withIntermediateDirectories: true)
        try FileManager.default.createDirectory(atPath: folder + "/docs/usr/share/doc/libgpiod-dev", withIntermediateDirectories: true)
        try Subprocess.write("!<arch>\nstand-in\n", to: host + "/usr/lib/aarch64-linux-gnu/libgpiod.a")
        try Subprocess.write("libgpiod is free software: LGPL-2.1-or-later (stand-in copyright)\n",
                             to: folder + "/docs/usr/share/doc/libgpiod-dev/copyright")
        let facts = "libgpiod-dev\t1.6.3-1+b3\tlibgpiod\t1.6.3-1\tarm64"
        try Subprocess.write("\t\t\(facts)\n/usr/lib/aarch64-linux-gnu/libgpiod.a\t\(digest)\t\(facts)\n", to: folder + "/index.tsv")
        try Subprocess.write("/ock/gpiod-v1/root\t\(host)\t\(folder)/index.tsv\t\(folder)/docs\n", to: folder + "/link-roots.tsv")
        let object = "/ock/scratch/aarch64-unknown-linux-gnu/release/Drivers.build/Backend.swift.o"
        let map = folder + "/carkey-agent.map"
        try Subprocess.write("/ock/gpiod-v1/root/usr/lib/aarch64-linux-gnu/libgpiod.a(libgpiod_la-core.o)\n"
                             + "                              \(object) (gpiod_chip_open)\n", to: map)
        return map
    }

    func testACrossLinksArchivesAreNamedFromItsTreesPackageIndex() throws {
        let folder = Subprocess.makeTemporaryDirectory()
        defer { Subprocess.removeTree(folder) }
        // SHA-256 of the stand-in archive's bytes ("!<arch>\nstand-in\n", sha256sum).
        let digest = "2c2e94f69a0305c7f4e4997815087257b4246bf73db5f2694a66bea98cd4d9bf"
        let map = try crossTree(in: folder, digest: digest)
        let result = try Subprocess.run(Self.notices, ["--title", "t", "--out", folder + "/N.txt", map])
        XCTAssertEqual(result.status, 0, result.stderr)
        let text = try Subprocess.read(folder + "/N.txt")
        XCTAssertTrue(text.contains("\n  libgpiod 1.6.3-1: LGPL-2.1-or-later"), text)
        XCTAssertTrue(text.contains("From: Debian (arm64): libgpiod-dev 1.6.3-1+b3"), text)
        XCTAssertTrue(text.contains("(stand-in copyright)"), "the licence text from the index's docs")
    }

    func testACrossLinkArchiveThatDiffersFromItsIndexStopsTheNotices() throws {
        let folder = Subprocess.makeTemporaryDirectory()
        defer { Subprocess.removeTree(folder) }
        let map = try crossTree(in: folder, digest: String(repeating: "0", count: 64))
        let result = try Subprocess.run(Self.notices, ["--title", "t", "--out", folder + "/N.txt", map])
        XCTAssertNotEqual(result.status, 0)
        XCTAssertTrue(result.stderr.contains("is not the /usr/lib/aarch64-linux-gnu/libgpiod.a of libgpiod-dev"), result.stderr)
        XCTAssertTrue(result.stderr.contains("remove the cache's stamps/arm64-*"), result.stderr)
        XCTAssertNotEqual(access(folder + "/N.txt", F_OK), 0, "no notices from an index of other versions")
    }

    func testTheAarch64NoticesNameTheArm64PackagesTheCrossLinkUsed() throws {
        let folder = Subprocess.repositoryRoot + "/build/aarch64"
        let maps = ["carkey-agent", "carkey"].map { folder + "/\($0).map" }
        for path in maps + [folder + "/link-roots.tsv"] where access(path, R_OK) != 0 {
            if getenv("CARKEY_REQUIRE_AARCH64").map({ String(cString: $0) }) == "1" { XCTFail("CARKEY_REQUIRE_AARCH64=1 but \(path) is missing") }
            throw XCTSkip("no \(path): run `make static-aarch64`")
        }
        let out = Subprocess.makeTemporaryDirectory()
        defer { Subprocess.removeTree(out) }
        let result = try Subprocess.run(Self.notices, ["--title", "t", "--out", out + "/N.txt"] + maps)
        XCTAssertEqual(result.status, 0, result.stderr)
        let text = try Subprocess.read(out + "/N.txt")
        for line in ["From: Debian (arm64): libc6-dev ", "From: Debian (arm64): libssl-dev 3.0.", "From: Debian (arm64): libgpiod-dev 1.6.",
                     "From: Debian (arm64): swiftlang ", "From: Debian (arm64): libsqlite3-dev 3.40.",
                     "built here from Debian's mosquitto "] {
            XCTAssertTrue(text.contains(line), line)
        }
        XCTAssertTrue(text.contains("Runtime Library Exception"), "the Swift licence's exception text")
    }

    // MARK: SBOM

    private func spdxValidator() throws -> String {
        let venv = getenv("OPENCARKEY_SPDX_VENV").map { String(cString: $0) } ?? "/var/cache/opencarkey-spdx"
        guard access(venv + "/bin/pyspdxtools", X_OK) == 0 else {
            if Self.required { XCTFail("CARKEY_REQUIRE_ARTIFACTS=1 but \(venv)/bin/pyspdxtools is missing (make deps)") }
            throw XCTSkip("no \(venv)/bin/pyspdxtools: run `make deps`")
        }
        return venv
    }

    func testTheSBOMIsValidSPDXWithVersionLicenceSupplierAndChecksumForEveryComponent() throws {
        _ = try spdxValidator()
        let folder = Subprocess.makeTemporaryDirectory()
        defer { Subprocess.removeTree(folder) }
        let map = try craftedMap(in: folder, archives: [Self.libdir + "/libgpiod.a", Self.libdir + "/libcrypto.a", Self.libdir + "/libc.a"])
        try Subprocess.write("stand-in artifact\n", to: folder + "/artifact.tar.gz")
        try Subprocess.write("stand-in binary\n", to: folder + "/carkey-agent")
        let out = folder + "/artifact.spdx.json"
        let made = try Subprocess.run(Self.sbom, ["--artifact", folder + "/artifact.tar.gz", "--version", "0.1.0", "--out", out,
                                                  "--binary", "carkey-agent=\(folder)/carkey-agent:\(map)"])
        XCTAssertEqual(made.status, 0, made.stderr)
        let good = try Subprocess.run(Self.checkSBOM, [out])
        XCTAssertEqual(good.status, 0, good.stdout + good.stderr)
        XCTAssertTrue(good.stdout.contains("SPDX 2.3, 5 packages"), good.stdout)
        let json = try Subprocess.read(out)
        XCTAssertTrue(json.contains("pkg:deb/debian/libgpiod-dev@"), "a purl for the Debian package")
        XCTAssertTrue(json.contains("\"relationshipType\": \"STATIC_LINK\""), "binary to library relationships")

        // A licence id SPDX does not know: the validator's finding.
        let misspelt = folder + "/misspelt.spdx.json"
        try Subprocess.write(json.replacingOccurrences(of: "LGPL-2.1-or-later", with: "LGPL-2.1-or-newer"), to: misspelt)
        let invalid = try Subprocess.run(Self.checkSBOM, [misspelt])
        XCTAssertEqual(invalid.status, 1)
        XCTAssertTrue(invalid.stderr.contains("LGPL-2.1-or-newer"), invalid.stderr)
        // Valid SPDX, but a component without its supplier: the completeness check's finding.
        let anonymous = folder + "/anonymous.spdx.json"
        try Subprocess.write(json.replacingOccurrences(of: "\"Organization: Debian (https://www.debian.org)\"", with: "\"NOASSERTION\""),
                             to: anonymous)
        let incomplete = try Subprocess.run(Self.checkSBOM, [anonymous])
        XCTAssertEqual(incomplete.status, 1)
        XCTAssertTrue(incomplete.stderr.contains("libgpiod: libgpiod.a: no supplier"), incomplete.stderr)
    }
}

// The Debian package (scripts/deb): built from the static binaries with scripts/deb/build.sh,
// checked with lintian (nothing beyond the explained overrides), by its archive listing (paths,
// modes, owners, conffiles, maintainer scripts) and by scripts/deb/test-install.sh, which
// installs, upgrades, removes and purges it in a Debian 12 chroot. Each checker is also run on
// a deliberately broken package, so a check that cannot fail would be caught.
//
// Needs root, dpkg-deb, lintian and debootstrap, and the static binaries build/static/carkey-agent
// and build/static/carkey (OPENCARKEY_DEB_BINARIES names another folder holding both). Without
// them the tests skip, unless CARKEY_REQUIRE_ARTIFACTS=1 makes that a failure. arm64 is packaged
// and linted too when build/aarch64 has both binaries.
import XCTest
#if canImport(Glibc)
import Glibc
#endif

final class DebianPackageTests: XCTestCase {
    private static var repositoryRoot: String { Subprocess.repositoryRoot }

    private static var required: Bool { environment("CARKEY_REQUIRE_ARTIFACTS") == "1" }

    private static func environment(_ name: String) -> String? { getenv(name).map { String(cString: $0) } }

    /// The packages this test class builds once: the version of the sources, the same with
    /// +test1 (the upgrade), per architecture with binaries.
    private struct Built {
        let folder: String
        let version: String
        let packages: [String: String] // architecture -> .deb
        let upgradeAMD64: String
    }

    private static let built: Result<Built, BuildFailure> = buildPackages()

    override class func tearDown() {
        // Only if a test built them (reading `built` here would build the packages).
        if case .success(let packages)? = builtOnce { Subprocess.removeTree(packages.folder) }
        super.tearDown()
    }

    private nonisolated(unsafe) static var builtOnce: Result<Built, BuildFailure>?

    private struct BuildFailure: Error, CustomStringConvertible {
        let description: String
        let skip: Bool
    }

    private static func buildPackages() -> Result<Built, BuildFailure> {
        let root = repositoryRoot
        guard geteuid() == 0 else { return .failure(BuildFailure(description: "needs root (chroot, dpkg)", skip: true)) }
        for tool in ["/usr/bin/dpkg-deb", "/usr/bin/lintian", "/usr/sbin/debootstrap", "/usr/bin/file"] where access(tool, X_OK) != 0 {
            return .failure(BuildFailure(description: "\(tool) is missing (Debian packages dpkg-dev, lintian, debootstrap, file)", skip: true))
        }
        let amd64 = environment("OPENCARKEY_DEB_BINARIES") ?? root + "/build/static"
        guard access(amd64 + "/carkey-agent", X_OK) == 0, access(amd64 + "/carkey", X_OK) == 0 else {
            return .failure(BuildFailure(description: "no static build in \(amd64) (carkey-agent and carkey): run `make static`", skip: true))
        }
        let folder = Subprocess.makeTemporaryDirectory()
        var archs = ["--arch", "amd64"]
        let arm64 = root + "/build/aarch64"
        if access(arm64 + "/carkey-agent", X_OK) == 0, access(arm64 + "/carkey", X_OK) == 0 { archs += ["--arch", "arm64"] }
        let script = root + "/scripts/deb/build.sh"
        let common = ["--out", folder, "--amd64-agent", amd64 + "/carkey-agent", "--amd64-carkey", amd64 + "/carkey"]
        do {
            let first = try Subprocess.run(script, common + archs)
            guard first.status == 0 else { return .failure(BuildFailure(description: "build.sh: \(first.stdout)\(first.stderr)", skip: false)) }
            let version = try sourceVersion()
            let second = try Subprocess.run(script, common + ["--arch", "amd64", "--version", version + "+test1", "--out", folder + "/upgrade"])
            guard second.status == 0 else { return .failure(BuildFailure(description: "build.sh --version: \(second.stdout)\(second.stderr)", skip: false)) }
            var packages: [String: String] = [:]
            for arch in ["amd64", "arm64"] where access("\(folder)/carkey-agent_\(version)_\(arch).deb", R_OK) == 0 {
                packages[arch] = "\(folder)/carkey-agent_\(version)_\(arch).deb"
            }
            return .success(Built(folder: folder, version: version, packages: packages,
                                  upgradeAMD64: "\(folder)/upgrade/carkey-agent_\(version)+test1_amd64.deb"))
        } catch {
            return .failure(BuildFailure(description: "\(error)", skip: false))
        }
    }

    private static func sourceVersion() throws -> String {
        let text = try Subprocess.read(repositoryRoot + "/Sources/Protocol/BuildInfo.swift")
        guard let line = text.split(separator: "\n").first(where: { $0.contains("static let version") }),
              let quoted = line.split(separator: "\"").dropFirst().first else { throw BuildFailure(description: "no version in BuildInfo.swift", skip: false) }
        return String(quoted)
    }

    private func packages() throws -> Built {
        Self.builtOnce = Self.built
        switch Self.built {
        case .success(let built):
            return built
        case .failure(let failure):
            if failure.skip && !Self.required { throw XCTSkip(failure.description) }
            XCTFail(failure.description)
            throw failure
        }
    }

    /// A copy of `deb` with `change` (a shell snippet run in the unpacked tree, "$1" = the tree)
    /// applied: the broken packages the negative tests feed to the checkers.
    private func repack(_ deb: String, named name: String, change: String) throws -> String {
        let folder = try packages().folder + "/broken-" + name
        let out = folder + ".deb"
        let script = "set -e; rm -rf \"$1\"; dpkg-deb -R \"$2\" \"$1\"; \(change); dpkg-deb --root-owner-group -Zgzip -z1 -b \"$1\" \"$3\" >/dev/null"
        let result = try Subprocess.run("/bin/bash", ["-c", script, "repack", folder, deb, out])
        XCTAssertEqual(result.status, 0, result.stderr)
        return out
    }

    // MARK: lintian

    func testLintianReportsNothingBeyondTheExplainedOverrides() throws {
        let built = try packages()
        XCTAssertNotNil(built.packages["amd64"])
        for (arch, deb) in built.packages.sorted(by: { $0.key < $1.key }) {
            let findings = try LintianReport.run(deb)
            XCTAssertEqual(findings.failing, [], "lintian on the \(arch) package")
            // The overrides are used (an override that matches nothing would hide nothing and
            // rot), and each one is explained by a comment right above it.
            XCTAssertEqual(findings.overridden.count, LintianReport.overrideCount, "\(arch): overridden \(findings.overridden)")
        }
        XCTAssertEqual(try LintianReport.unexplainedOverrides(), [], "each override has a comment above it")
    }

    func testLintianCatchesAPackageWithoutItsOverrides() throws {
        // packages() outside XCTUnwrap: a skip thrown inside its autoclosure becomes a failure.
        let built = try packages()
        let deb = try XCTUnwrap(built.packages["amd64"])
        let broken = try repack(deb, named: "no-overrides", change: "rm -r \"$1/usr/share/lintian\"")
        let findings = try LintianReport.run(broken)
        XCTAssertTrue(findings.failing.contains("E: statically-linked-binary [usr/bin/carkey-agent]"), "\(findings.failing)")
        XCTAssertTrue(findings.failing.contains("W: non-standard-file-perm 0640 != 0644 [etc/opencarkey/agent.json]"), "\(findings.failing)")
    }

    // MARK: contents

    func testArchiveHoldsTheLayoutWithModesOwnersAndConffiles() throws {
        let built = try packages()
        for (arch, deb) in built.packages {
            XCTAssertEqual(try PackageLayout.findings(deb, version: built.version, arch: arch), [], "\(arch) package")
        }
    }

    /// Beside each .deb, its SPDX SBOM: valid (pyspdxtools, from `make deps`), complete, and
    /// describing that very file; a package changed after the build no longer matches it.
    func testEachPackageHasAValidSBOMDescribingItsBytes() throws {
        let built = try packages()
        let check = DebianPackageLocations.root + "/scripts/licensing/check-sbom.sh"
        for (arch, deb) in built.packages {
            let sbom = String(deb.dropLast(4)) + ".spdx.json"
            let result = try Subprocess.run(check, [sbom])
            if result.status == 2, !Self.required { throw XCTSkip(result.stderr) }
            XCTAssertEqual(result.status, 0, "\(arch): \(result.stdout)\(result.stderr)")
            let text = try Subprocess.read(sbom)
            XCTAssertTrue(text.contains("\"checksumValue\": \"\(try Self.sha256(deb))\""), "\(arch): the .deb's SHA-256")
            let changed = try repack(deb, named: "sbom-\(arch)", change: "echo changed >> \"$1/usr/share/doc/carkey-agent/copyright\"")
            XCTAssertFalse(text.contains("\"checksumValue\": \"\(try Self.sha256(changed))\""), "\(arch): a changed package is not the one described")
        }
    }

    private static func sha256(_ path: String) throws -> String {
        String(try Subprocess.run("/usr/bin/sha256sum", [path]).stdout.prefix(64))
    }

    func testLayoutCheckerFindsAWrongModeAMissingFileAndAStateDirectoryInTheArchive() throws {
        let built = try packages()
        let deb = try XCTUnwrap(built.packages["amd64"])
        let broken = try repack(deb, named: "layout", change: """
            chmod 0644 "$1/etc/opencarkey/agent.json"; rm "$1/usr/bin/carkey"; \
            install -d -m 0755 "$1/var/lib/opencarkey"
            """)
        let findings = try PackageLayout.findings(broken, version: built.version, arch: "amd64")
        XCTAssertTrue(findings.contains("./etc/opencarkey/agent.json is -rw-r--r-- root/root, expected -rw-r----- root/root"), "\(findings)")
        XCTAssertTrue(findings.contains("./usr/bin/carkey is missing"), "\(findings)")
        XCTAssertTrue(findings.contains("./var/lib/opencarkey/ is in the archive (the postinst makes it, so dpkg never deletes it)"), "\(findings)")
    }

    // MARK: the documentation against the package

    /// Every installed path the shipped documentation names (the README, board/README.md,
    /// docs/operations.md, the unit, the packaged agent.json and the man pages, read from the
    /// package itself) is in the package, and every user it names is the package's user.
    func testEveryInstalledPathAndUserTheDocumentationNamesIsThePackages() throws {
        let built = try packages()
        let deb = try XCTUnwrap(built.packages["amd64"])
        let tree = built.folder + "/unpacked-docs"
        let unpack = try Subprocess.run("/bin/sh", ["-c", "rm -rf \"$1\" && dpkg-deb -x \"$2\" \"$1\"", "unpack", tree, deb])
        XCTAssertEqual(unpack.status, 0, unpack.stderr)
        let installed = try PackageLayout.installedPaths(deb)
        let sysusers = try Subprocess.read(tree + "/usr/lib/sysusers.d/carkey-agent.conf")
        let user = try XCTUnwrap(try Sysusers(sysusers).users.first, "the package declares its user")
        XCTAssertEqual(user, "carkey")
        let postinst = try Subprocess.run("/bin/sh", ["-c", "dpkg-deb -I \"$1\" postinst", "postinst", deb]).stdout
        XCTAssertTrue(postinst.contains("install -d -m 0700 -o \(user) -g \(user)"), "the postinst makes the state directory for \(user)")

        var documents: [DocumentedPaths.Document] = []
        for path in DocumentedPaths.documents {
            let file = tree + path
            let text = path.hasSuffix(".gz")
                ? try Subprocess.run("/bin/sh", ["-c", "gzip -dc \"$1\"", "gunzip", file]).stdout
                : try Subprocess.read(file)
            XCTAssertFalse(text.isEmpty, "\(path) is in the package")
            documents.append(DocumentedPaths.Document(name: path, text: text))
        }
        let findings = DocumentedPaths.findings(documents, installed: installed, user: user)
        XCTAssertEqual(findings, [], "documentation that does not match the package")
        // The checker saw the paths this issue was about (so an empty list means checked, not skipped).
        let named = Set(documents.flatMap { DocumentedPaths.installedPaths(in: $0.text) })
        for path in ["/usr/share/opencarkey/overlays/opencarkey-dwm3000-rpi.dtbo", "/usr/share/opencarkey/boards/raspberrypi5-uwb.json",
                     "/usr/share/opencarkey/boards/raspberrypi5-no-uwb.json", "/lib/udev/rules.d/60-opencarkey.rules",
                     "/usr/share/doc/carkey-agent/board/README.md", "/etc/opencarkey/agent.json"] {
            XCTAssertTrue(named.contains(path), "the documentation names \(path)")
        }
        // The packaged overlay is the repository's source, compiled.
        let dtbo = built.folder + "/fresh.dtbo"
        let compiled = try Subprocess.run("/usr/bin/dtc", ["-@", "-I", "dts", "-O", "dtb", "-o", dtbo,
                                                           Self.repositoryRoot + "/board/overlays/opencarkey-dwm3000-rpi.dts"])
        XCTAssertEqual(compiled.status, 0, compiled.stderr)
        let same = try Subprocess.run("/usr/bin/cmp", [dtbo, tree + "/usr/share/opencarkey/overlays/opencarkey-dwm3000-rpi.dtbo"])
        XCTAssertEqual(same.status, 0, "the packaged .dtbo is the compiled overlay: \(same.stdout)")
    }

    func testTheDocumentationCheckerFindsAMissingPathAndAnotherUser() {
        let installed: Set<String> = ["/usr/bin/carkey-agent", "/lib/udev/rules.d/60-opencarkey.rules", "/usr/share/opencarkey/boards",
                                      "/usr/share/opencarkey/boards/raspberrypi5-uwb.json", "/usr/share/doc/carkey-agent",
                                      "/usr/share/doc/carkey-agent/board/README.md", "/etc/opencarkey/agent.json"]
        let text = """
            Rules in `/usr/lib/udev/rules.d/60-opencarkey.rules`, boards in /usr/share/opencarkey/boards/.
            Documentation=file:///usr/share/doc/opencarkey/README.md
            Documentation=file:///usr/share/doc/carkey-agent/board/README.md
            "board": "/usr/share/opencarkey/boards/raspberrypi5.json", config /etc/opencarkey/agent.json,
            a PIN file /etc/opencarkey/token.pin and state in /var/lib/opencarkey (not package files).
            sudo -u opencarkey carkey-agent backup; User=carkey; the user `carkey`.
            """
        let findings = DocumentedPaths.findings([DocumentedPaths.Document(name: "doc", text: text)], installed: installed, user: "carkey")
        XCTAssertEqual(findings, [
            "doc names /usr/lib/udev/rules.d/60-opencarkey.rules, which the package does not install",
            "doc names /usr/share/doc/opencarkey/README.md, which the package does not install",
            "doc names /usr/share/opencarkey/boards/raspberrypi5.json, which the package does not install",
            "doc names the user opencarkey, the package's user is carkey",
        ])
    }

    // MARK: install, upgrade, remove, purge

    func testInstallUpgradeRemovePurgeInABookwormChroot() throws {
        let built = try packages()
        let deb = try XCTUnwrap(built.packages["amd64"])
        let result = try Subprocess.run(Self.repositoryRoot + "/scripts/deb/test-install.sh", [deb, built.upgradeAMD64])
        let lines = result.stdout.split(separator: "\n").map(String.init)
        XCTAssertEqual(result.status, 0, String(result.stdout.suffix(3000)) + result.stderr)
        print(lines.last ?? "")
        // The decisions, each one seen by the script (the script stops at the first FAIL).
        for expected in ["ok: /var/lib/opencarkey 700 carkey carkey", "ok: /etc/opencarkey/agent.json 640 root carkey",
                         "ok: carkey-agent ran 5 s as carkey with the packaged config and made its identity",
                         "ok: dpkg status: deinstall ok config-files \(built.version)+test1",
                         "ok: /var/lib/opencarkey/car-identity.pub holds what was written",
                         "ok: /var/lib/opencarkey absent", "ok: user carkey kept"] {
            XCTAssertTrue(lines.contains(expected), "test-install printed \(expected)")
        }
        XCTAssertTrue(lines.last?.hasPrefix("test-install: passed (amd64, users by adduser, \(built.version) -> \(built.version)+test1;") == true, lines.last ?? "")
    }

    /// The path real systems take: systemd installed (not running), so the postinst makes the
    /// user from the sysusers.d file with systemd-sysusers (the first run debootstraps a second
    /// cached base with systemd, a few minutes).
    func testInstallUpgradeRemovePurgeWithSystemdSysusers() throws {
        let built = try packages()
        let deb = try XCTUnwrap(built.packages["amd64"])
        let result = try Subprocess.run(Self.repositoryRoot + "/scripts/deb/test-install.sh", ["--systemd", deb, built.upgradeAMD64])
        let lines = result.stdout.split(separator: "\n").map(String.init)
        XCTAssertEqual(result.status, 0, String(result.stdout.suffix(3000)) + result.stderr)
        print(lines.last ?? "")
        XCTAssertTrue(lines.contains("ok: the postinst will make the user with systemd-sysusers"))
        XCTAssertTrue(lines.contains("ok: /var/lib/opencarkey 700 carkey carkey"))
        XCTAssertTrue(lines.last?.hasPrefix("test-install: passed (amd64, users by systemd-sysusers,") == true, lines.last ?? "")
    }

    func testInstallCheckFailsWhenThePostinstMakesTheStateDirectoryWorldReadable() throws {
        let built = try packages()
        let deb = try XCTUnwrap(built.packages["amd64"])
        let broken = try repack(deb, named: "state-mode", change: """
            grep -q 'install -d -m 0700 -o carkey -g carkey' "$1/DEBIAN/postinst"; \
            sed -i 's/install -d -m 0700 -o carkey/install -d -m 0755 -o carkey/' "$1/DEBIAN/postinst"
            """)
        let result = try Subprocess.run(Self.repositoryRoot + "/scripts/deb/test-install.sh", [broken, built.upgradeAMD64])
        XCTAssertEqual(result.status, 1, result.stdout + result.stderr)
        XCTAssertTrue(result.stdout.contains("FAIL: /var/lib/opencarkey is 755 carkey carkey, expected 700 carkey carkey"), result.stdout)
    }
}

/// lintian's verdict on one package, read from its output lines ("E: pkg: tag [context]").
private struct LintianReport {
    /// E: and W: findings, and the I: unused-override (an override that matched nothing), as
    /// "E: tag [context]".
    var failing: [String] = []
    /// O: lines: findings an override silenced.
    var overridden: [String] = []

    static let overridesFile = DebianPackageLocations.root + "/scripts/deb/templates/lintian-overrides"
    static let maxOutput = 1 << 20

    static func run(_ deb: String) throws -> LintianReport {
        // --pedantic and --display-info to see every finding; --show-overrides to count the
        // overrides used. The verdict comes from the lines, not the exit status.
        let result = try Subprocess.run("/usr/bin/lintian", ["--pedantic", "--display-info", "--show-overrides", deb])
        guard result.stdout.utf8.count <= maxOutput else { throw LintianFailure(reason: "output over \(maxOutput) bytes") }
        // Exit 0, or 2 when a finding reaches --fail-on (with --show-overrides an overridden
        // error counts too); 1 is lintian's own run-time error.
        guard result.status == 0 || result.status == 2 else { throw LintianFailure(reason: "lintian exited \(result.status): \(result.stderr)") }
        var report = LintianReport()
        for line in result.stdout.split(separator: "\n") {
            let parts = line.split(separator: ":", maxSplits: 2)
            guard parts.count == 3, parts[0].count == 1 else { continue }
            let finding = "\(parts[0]):\(parts[2])"
            switch parts[0] {
            case "E", "W": report.failing.append(finding)
            case "I" where parts[2].hasPrefix(" unused-override"): report.failing.append(finding)
            case "O": report.overridden.append(finding)
            default: continue // I:, P:, X:, N: are noted, not failures
            }
        }
        return report
    }

    private static func overrideLines() throws -> [(line: String, explained: Bool)] {
        var previousIsComment = false
        var lines: [(String, Bool)] = []
        for line in try Subprocess.read(overridesFile).split(separator: "\n", omittingEmptySubsequences: false) {
            if line.hasPrefix("#") { previousIsComment = true; continue }
            if !line.isEmpty { lines.append((String(line), previousIsComment)) }
            // An override directly after another shares its comment; a blank line ends it.
            if line.isEmpty { previousIsComment = false }
        }
        return lines
    }

    static var overrideCount: Int { (try? overrideLines().count) ?? -1 }

    static func unexplainedOverrides() throws -> [String] {
        try overrideLines().filter { !$0.explained }.map { $0.line }
    }
}

private struct LintianFailure: Error { let reason: String }

private enum DebianPackageLocations {
    static var root: String { Subprocess.repositoryRoot }
}

/// The installed files the documentation names, and the users it names, compared with a package.
enum DocumentedPaths {
    struct Document {
        let name: String
        let text: String
    }

    /// Where the shipped documentation lives in the package.
    static let documents = [
        "/usr/share/doc/carkey-agent/README.md",
        "/usr/share/doc/carkey-agent/board/README.md",
        "/usr/share/doc/carkey-agent/docs/operations.md",
        "/usr/share/doc/carkey-agent/board/raspberrypi/config.txt",
        "/lib/systemd/system/carkey-agent.service",
        "/etc/opencarkey/agent.json",
        "/usr/share/man/man8/carkey-agent.8.gz",
        "/usr/share/man/man1/carkey.1.gz",
    ]

    private static func isPathCharacter(_ c: Character) -> Bool {
        c.isLetter || c.isNumber || "._-/+*@".contains(c)
    }

    /// Absolute paths under /usr or /lib with "carkey" in them (the package's own names), and
    /// the config file: what the text says the package installs. Other paths (the state
    /// directory, files an administrator adds to /etc/opencarkey, other packages' files) are
    /// not the package's to have.
    static func installedPaths(in text: String) -> [String] {
        let characters = Array(text.replacingOccurrences(of: "file://", with: " "))
        var paths: [String] = []
        var index = 0
        while index < characters.count {
            let startsPath = characters[index] == "/" && (index == 0 || !isPathCharacter(characters[index - 1]))
            guard startsPath else { index += 1; continue }
            var end = index
            while end < characters.count, isPathCharacter(characters[end]) { end += 1 }
            var path = String(characters[index..<end])
            index = end
            while let last = path.last, ".-".contains(last) { path.removeLast() }
            if path.count > 1, path.hasSuffix("/") { path.removeLast() }
            let owned = (path.hasPrefix("/usr/") || path.hasPrefix("/lib/")) && path.contains("carkey")
            if owned || path == "/etc/opencarkey/agent.json" { paths.append(path) }
        }
        return paths
    }

    /// Users named as `sudo -u NAME`, `User=NAME` or "user `NAME`".
    static func userNames(in text: String) -> [String] {
        var names: [String] = []
        for marker in ["sudo -u ", "User=", "user `"] {
            var rest = Substring(text)
            while let range = rest.range(of: marker) {
                let name = rest[range.upperBound...].prefix { $0.isLetter || $0.isNumber || $0 == "_" || $0 == "-" }
                if !name.isEmpty { names.append(String(name)) }
                rest = rest[range.upperBound...]
            }
        }
        return names
    }

    /// One line per disagreement: a named path the package does not install (a glob needs one
    /// installed path under its fixed part), a named user that is not the package's.
    static func findings(_ documents: [Document], installed: Set<String>, user: String) -> [String] {
        var findings: [String] = []
        for document in documents {
            var reported = Set<String>()
            for path in installedPaths(in: document.text) where !reported.contains(path) {
                reported.insert(path)
                let found: Bool
                if let star = path.firstIndex(of: "*") {
                    let fixed = String(path[..<star])
                    found = installed.contains { $0.hasPrefix(fixed) }
                } else {
                    found = installed.contains(path)
                }
                if !found { findings.append("\(document.name) names \(path), which the package does not install") }
            }
            for name in Set(userNames(in: document.text)).sorted() where name != user {
                findings.append("\(document.name) names the user \(name), the package's user is \(user)")
            }
        }
        return findings
    }
}

/// What the archive must hold, read with dpkg-deb -c (listing) and -f / --ctrl-tarfile (control).
private enum PackageLayout {
    /// Every file and folder in the archive as an absolute path ("./usr/bin/" -> "/usr/bin").
    static func installedPaths(_ deb: String) throws -> Set<String> {
        let listing = try Subprocess.run("/usr/bin/dpkg-deb", ["-c", deb])
        guard listing.status == 0 else { throw LintianFailure(reason: "dpkg-deb -c: \(listing.stderr)") }
        var paths: Set<String> = []
        for line in listing.stdout.split(separator: "\n") {
            let fields = line.split(separator: " ", omittingEmptySubsequences: true)
            guard fields.count >= 6 else { continue }
            var path = String(fields[5].dropFirst())
            if path.count > 1, path.hasSuffix("/") { path.removeLast() }
            paths.insert(path)
        }
        return paths
    }

    /// path -> "mode owner/group" as dpkg-deb -c prints them.
    static let expected: [String: String] = [
        "./usr/bin/carkey-agent": "-rwxr-xr-x root/root",
        "./usr/bin/carkey": "-rwxr-xr-x root/root",
        // The PKCS#11 vault's helper, dynamically linked (docs/pkcs11-bridge.md).
        "./usr/libexec/opencarkey/carkey-pkcs11-bridge": "-rwxr-xr-x root/root",
        "./lib/systemd/system/carkey-agent.service": "-rw-r--r-- root/root",
        "./lib/udev/rules.d/60-opencarkey.rules": "-rw-r--r-- root/root",
        "./usr/lib/sysusers.d/carkey-agent.conf": "-rw-r--r-- root/root",
        // The PIN: never world-readable; the group becomes carkey through dpkg-statoverride.
        "./etc/opencarkey/agent.json": "-rw-r----- root/root",
        "./usr/share/doc/carkey-agent/copyright": "-rw-r--r-- root/root",
        // Made from the binaries' link maps (scripts/licensing/notices.py).
        "./usr/share/doc/carkey-agent/THIRD-PARTY-NOTICES.txt": "-rw-r--r-- root/root",
        "./usr/share/doc/carkey-agent/changelog.gz": "-rw-r--r-- root/root",
        "./usr/share/doc/carkey-agent/examples/agent.example.json": "-rw-r--r-- root/root",
        "./usr/share/man/man8/carkey-agent.8.gz": "-rw-r--r-- root/root",
        "./usr/share/man/man1/carkey.1.gz": "-rw-r--r-- root/root",
        "./usr/share/opencarkey/boards/simulated.json": "-rw-r--r-- root/root",
        // A Pi with and without the UWB module: both files of each model.
        "./usr/share/opencarkey/boards/raspberrypi4-uwb.json": "-rw-r--r-- root/root",
        "./usr/share/opencarkey/boards/raspberrypi4-no-uwb.json": "-rw-r--r-- root/root",
        "./usr/share/opencarkey/boards/raspberrypi5-uwb.json": "-rw-r--r-- root/root",
        "./usr/share/opencarkey/boards/raspberrypi5-no-uwb.json": "-rw-r--r-- root/root",
        "./usr/share/opencarkey/boards/sk-tda4vm.json": "-rw-r--r-- root/root",
        // Compiled at package build time: a Pi image has no dtc.
        "./usr/share/opencarkey/overlays/opencarkey-dwm3000-rpi.dts": "-rw-r--r-- root/root",
        "./usr/share/opencarkey/overlays/opencarkey-dwm3000-rpi.dtbo": "-rw-r--r-- root/root",
        "./usr/share/opencarkey/overlays/opencarkey-dwm3000-sk-tda4vm.dtbo": "-rw-r--r-- root/root",
        // What the unit's Documentation= and the packaged agent.json point to.
        "./usr/share/doc/carkey-agent/README.md": "-rw-r--r-- root/root",
        "./usr/share/doc/carkey-agent/board/README.md": "-rw-r--r-- root/root",
        "./usr/share/doc/carkey-agent/board/raspberrypi/config.txt": "-rw-r--r-- root/root",
        "./usr/share/doc/carkey-agent/docs/operations.md": "-rw-r--r-- root/root",
    ]

    static func findings(_ deb: String, version: String, arch: String) throws -> [String] {
        var findings: [String] = []
        let listing = try Subprocess.run("/usr/bin/dpkg-deb", ["-c", deb])
        guard listing.status == 0 else { return ["dpkg-deb -c failed: \(listing.stderr)"] }
        var entries: [String: String] = [:]
        for line in listing.stdout.split(separator: "\n") {
            // "-rw-r--r-- root/root  2642 2026-12-02 04:17 ./lib/..." (a link adds " -> target")
            let fields = line.split(separator: " ", omittingEmptySubsequences: true)
            guard fields.count >= 6 else { findings.append("unreadable listing line: \(line)"); continue }
            entries[String(fields[5])] = "\(fields[0]) \(fields[1])"
        }
        for (path, modeAndOwner) in expected.sorted(by: { $0.key < $1.key }) {
            guard let found = entries[path] else { findings.append("\(path) is missing"); continue }
            if found != modeAndOwner { findings.append("\(path) is \(found), expected \(modeAndOwner)") }
        }
        for (path, modeAndOwner) in entries.sorted(by: { $0.key < $1.key }) {
            let mode = Array(modeAndOwner.prefix(10))
            if !modeAndOwner.hasSuffix(" root/root") { findings.append("\(path) is owned by \(modeAndOwner.dropFirst(11))") }
            if mode[8] == "w" { findings.append("\(path) is world-writable") }
            if mode.contains("s") || mode.contains("S") { findings.append("\(path) is setuid or setgid") }
        }
        if entries["./var/lib/opencarkey/"] != nil {
            findings.append("./var/lib/opencarkey/ is in the archive (the postinst makes it, so dpkg never deletes it)")
        }
        for (field, value) in [("Package", "carkey-agent"), ("Version", version), ("Architecture", arch)] {
            let got = try Subprocess.run("/usr/bin/dpkg-deb", ["-f", deb, field]).stdout.split(separator: "\n").first.map(String.init) ?? ""
            if got != value { findings.append("control \(field) is \"\(got)\", expected \"\(value)\"") }
        }
        let depends = try Subprocess.run("/usr/bin/dpkg-deb", ["-f", deb, "Depends"]).stdout
        if !depends.contains("adduser") { findings.append("Depends lacks adduser (the postinst's fallback): \(depends)") }
        // The control members: conffiles names the config; the maintainer scripts are
        // executable and valid POSIX sh.
        let check = """
            set -e; d=$(mktemp -d); trap 'rm -rf "$d"' EXIT; dpkg-deb -e "$1" "$d"
            [ "$(cat "$d/conffiles")" = /etc/opencarkey/agent.json ] || echo "conffiles: $(cat "$d/conffiles")"
            # The shipped config must not carry a service PIN (every car would share it).
            dpkg-deb --fsys-tarfile "$1" | tar -xO ./etc/opencarkey/agent.json | grep -q '"pin"' && echo "agent.json carries a service PIN"
            for s in postinst prerm postrm; do
              [ -x "$d/$s" ] || echo "$s missing or not executable"
              [ ! -e "$d/$s" ] || sh -n "$d/$s" || echo "$s: sh -n failed"
            done
            """
        let control = try Subprocess.run("/bin/sh", ["-c", check, "check", deb])
        findings += (control.stdout + control.stderr).split(separator: "\n").map(String.init)
        return findings
    }
}

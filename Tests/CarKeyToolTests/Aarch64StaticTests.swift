// The static aarch64 build (`make static-aarch64`, scripts/aarch64) checked under
// qemu-aarch64-static: scripts/aarch64/smoke.sh runs --version, the self-test, keygen and a
// simulated car with one enrolled phone and one unlock, and prints a line per check; these
// tests assert on those lines, on `file`, and that the script fails when it should.
// The binaries come from a separate cross build: without build/aarch64/carkey-agent the tests
// that need it skip, unless CARKEY_REQUIRE_AARCH64=1 makes that a failure (.ci/run builds them
// on every run and sets it). The tpm2 case runs the aarch64 agent under qemu against a swtpm on
// host loopback: the TPM 2.0 vault needs no library, so the static board binary has it.
import Drivers
import TestHarness
import XCTest
#if canImport(Glibc)
import Glibc
#endif

final class Aarch64StaticTests: XCTestCase {
    private static var repositoryRoot: String { Subprocess.repositoryRoot }
    private static var artifacts: String { repositoryRoot + "/build/aarch64" }
    private static var smoke: String { repositoryRoot + "/scripts/aarch64/smoke.sh" }
    /// Every check smoke.sh makes, in order: the script must report each one as ok.
    private static let checks = ["file carkey-agent", "file carkey", "version", "self-test", "keygen",
                                 "run", "pair", "enroll", "unlock", "events", "sigterm"]

    private func requireArtifacts() throws {
        let required = getenv("CARKEY_REQUIRE_AARCH64").map { String(cString: $0) } == "1"
        for tool in ["/usr/bin/qemu-aarch64-static", "/usr/bin/file"] where access(tool, X_OK) != 0 {
            if required { XCTFail("\(tool) is missing (Debian packages qemu-user-static, file)") }
            throw XCTSkip("\(tool) is not installed")
        }
        guard access(Self.artifacts + "/carkey-agent", R_OK) == 0, access(Self.artifacts + "/carkey", R_OK) == 0 else {
            if required { XCTFail("CARKEY_REQUIRE_AARCH64=1 but \(Self.artifacts)/carkey-agent or carkey is missing") }
            throw XCTSkip("no aarch64 build: run `make static-aarch64` (minutes cold, its set-up cached afterwards)")
        }
    }

    private func runSmoke(_ folder: String) throws -> (status: Int32, lines: [String]) {
        let result = try Subprocess.run("/bin/bash", [Self.smoke, folder])
        return (result.status, result.stdout.split(separator: "\n").map(String.init) + [result.stderr])
    }

    func testBinariesAreStaticAarch64AndPassTheSmokeTestUnderQemu() throws {
        try requireArtifacts()
        for name in ["carkey-agent", "carkey"] {
            let file = try Subprocess.run("/usr/bin/file", ["-b", Self.artifacts + "/" + name])
            XCTAssertTrue(file.stdout.hasPrefix("ELF 64-bit LSB executable, ARM aarch64"), "\(name): \(file.stdout)")
            XCTAssertTrue(file.stdout.contains("statically linked"), "\(name): \(file.stdout)")
            XCTAssertFalse(file.stdout.contains("interpreter"), "\(name) asks for a dynamic loader: \(file.stdout)")
        }
        let (status, lines) = try runSmoke(Self.artifacts)
        XCTAssertEqual(status, 0, lines.joined(separator: "\n"))
        let oks = lines.filter { $0.hasPrefix("smoke: ok ") }.map { line in
            String(line.dropFirst("smoke: ok ".count).prefix { $0 != ":" })
        }
        XCTAssertEqual(oks, Self.checks, lines.joined(separator: "\n"))
        XCTAssertEqual(lines.filter { $0.hasPrefix("smoke: FAIL") }, [])
        XCTAssertTrue(lines.contains("smoke: \(Self.checks.count) passed, 0 failed"), lines.joined(separator: "\n"))
        XCTAssertTrue(lines.contains { $0.hasPrefix("smoke: ok self-test: ") && $0.hasSuffix(" passed, 0 failed") })
        XCTAssertTrue(lines.contains { $0.hasPrefix("smoke: ok version: carkey-agent ") })

        // The figures are sanity figures, but they must be there and plausible: a start-up
        // between 1 ms and a minute, qemu's resident set between 1 MB and 1 GB.
        let startup = try XCTUnwrap(figure("startup-ms", in: lines), lines.joined(separator: "\n"))
        XCTAssertTrue((1...60_000).contains(startup), "startup-ms \(startup)")
        let rss = try XCTUnwrap(figure("idle-rss-kb", in: lines), lines.joined(separator: "\n"))
        XCTAssertTrue((1_000...1_000_000).contains(rss), "idle-rss-kb \(rss)")
        XCTAssertTrue(lines.contains { $0.hasPrefix("smoke: figure idle-rss-kb") && $0.contains("qemu's RSS") })
    }

    /// The bookworm arm64 userland scripts/aarch64/setup.sh unpacks for this test: Debian 12's
    /// glibc 2.36 (the boards') and SoftHSM2.
    private static var bookwormRoot: String {
        (getenv("OPENCARKEY_AARCH64_CACHE").map { String(cString: $0) } ?? "/var/cache/opencarkey-aarch64")
            + "/amd64/ock/softhsm-bookworm/root"
    }

    /// The static aarch64 agent under qemu with a bookworm arm64 SoftHSM2 token through the
    /// aarch64 carkey-pkcs11-bridge, itself run by qemu against bookworm's glibc (-L). This host
    /// has no binfmt_misc entry for aarch64, so the agent starts the bridge through a wrapper
    /// script named carkey-pkcs11-bridge that runs it under qemu-aarch64-static.
    func testTheStaticAgentUsesAnArm64SoftHSMTokenThroughTheAarch64BridgeUnderQemu() throws {
        try requireArtifacts()
        let required = getenv("CARKEY_REQUIRE_AARCH64").map { String(cString: $0) } == "1"
        let root = Self.bookwormRoot
        let bridge = Self.artifacts + "/carkey-pkcs11-bridge"
        for path in [bridge, root + "/usr/lib/softhsm/libsofthsm2.so", root + "/usr/bin/softhsm2-util"] where access(path, R_OK) != 0 {
            if required { XCTFail("CARKEY_REQUIRE_AARCH64=1 but \(path) is missing (make static-aarch64)") }
            throw XCTSkip("\(path) is missing: run `make static-aarch64`")
        }
        let file = try Subprocess.run("/usr/bin/file", ["-b", bridge]).stdout
        XCTAssertTrue(file.contains("ARM aarch64") && file.contains("dynamically linked"), file)
        // Debian 12 has glibc 2.36: nothing newer than GLIBC_2.34 may be needed.
        let symbols = try Subprocess.run("/usr/bin/readelf", ["--dyn-syms", "-W", bridge]).stdout
        let versions = symbols.components(separatedBy: "@GLIBC_2.").dropFirst().compactMap { Int($0.prefix { $0.isNumber }) }
        XCTAssertFalse(versions.isEmpty, symbols)
        XCTAssertLessThanOrEqual(versions.max() ?? 99, 34, "GLIBC_2.\(versions.max() ?? 0) needed")

        let folder = Subprocess.makeTemporaryDirectory()
        defer { Subprocess.removeTree(folder) }
        XCTAssertEqual(mkdir(folder + "/tokens", 0o700), 0)
        try Subprocess.write("directories.tokendir = \(folder)/tokens\nobjectstore.backend = file\nlog.level = ERROR\nslots.removable = false\n",
                             to: folder + "/softhsm2.conf")
        setenv("SOFTHSM2_CONF", folder + "/softhsm2.conf", 1)
        defer { unsetenv("SOFTHSM2_CONF") }
        let made = try Subprocess.run("/usr/bin/qemu-aarch64-static", ["-L", root, root + "/usr/bin/softhsm2-util", "--init-token", "--free",
                                                                      "--label", "arm64-car", "--so-pin", "87654321", "--pin", "123456"])
        XCTAssertEqual(made.status, 0, made.stdout + made.stderr)
        let wrapper = folder + "/qemu/carkey-pkcs11-bridge"
        XCTAssertEqual(mkdir(folder + "/qemu", 0o700), 0)
        try Subprocess.write("#!/bin/sh\nexec /usr/bin/qemu-aarch64-static -L \(root) \(bridge) \"$@\"\n", to: wrapper)
        XCTAssertEqual(chmod(wrapper, 0o755), 0)
        try Subprocess.write("123456\n", to: folder + "/pin")
        XCTAssertEqual(chmod(folder + "/pin", 0o600), 0)
        let config = folder + "/agent.json"
        try Subprocess.write(#"{"vault": {"provider": "pkcs11", "module": "/usr/lib/softhsm/libsofthsm2.so", "token": "arm64-car", "pinFile": ""#
                             + folder + #"/pin", "bridge": ""# + wrapper + #""}}"#, to: config)
        let dir = ["--state-dir", folder + "/state", "--config", config]

        let agent = try BackgroundProcess("/usr/bin/qemu-aarch64-static", [Self.artifacts + "/carkey-agent", "run", "--simulate", "--clock-sync", "no"] + dir)
        let up = agent.wait(timeoutSeconds: 120) { agent.stderr.contains("carkey-agent: control socket") || !agent.isRunning }
        XCTAssertTrue(up && agent.isRunning, agent.stderr)
        XCTAssertTrue(agent.stderr.contains("key vault: pkcs11: PKCS#11 module /usr/lib/softhsm/libsofthsm2.so, token arm64-car (SoftHSM"), agent.stderr)
        XCTAssertEqual(agent.stop(timeoutSeconds: 30), 0, "SIGTERM is a clean exit: \(agent.stderrTail)")
        XCTAssertFalse(agent.stderr.contains("double free"), agent.stderr)
        let keys = try Subprocess.run("/usr/bin/qemu-aarch64-static", [Self.artifacts + "/carkey-agent", "keys"] + dir)
        XCTAssertEqual(keys.status, 0, keys.stderr)
    }

    /// A folder without the binaries: the script says which is missing and fails.
    func testSmokeFailsWhenABinaryIsMissing() throws {
        guard access("/usr/bin/file", X_OK) == 0 else { throw XCTSkip("/usr/bin/file is not installed") }
        let folder = Subprocess.makeTemporaryDirectory()
        defer { Subprocess.removeTree(folder) }
        let (status, lines) = try runSmoke(folder)
        XCTAssertEqual(status, 1, lines.joined(separator: "\n"))
        XCTAssertTrue(lines.contains { $0.hasPrefix("smoke: FAIL file carkey-agent:") && $0.contains("missing") }, lines.joined(separator: "\n"))
        XCTAssertFalse(lines.contains { $0.hasPrefix("smoke: ok") }, lines.joined(separator: "\n"))
    }

    /// The host's own (x86_64, dynamically linked) build in place of the aarch64 one is refused
    /// by the `file` check before anything runs.
    func testSmokeRefusesAHostBinary() throws {
        guard access("/usr/bin/file", X_OK) == 0 else { throw XCTSkip("/usr/bin/file is not installed") }
        let folder = Subprocess.makeTemporaryDirectory()
        defer { Subprocess.removeTree(folder) }
        for name in ["carkey-agent", "carkey"] {
            XCTAssertEqual(symlink(Subprocess.productsDirectory + "/" + name, folder + "/" + name), 0)
        }
        let (status, lines) = try runSmoke(folder)
        XCTAssertEqual(status, 1, lines.joined(separator: "\n"))
        XCTAssertTrue(lines.contains { $0.hasPrefix("smoke: FAIL file carkey-agent: not a static aarch64 executable") && $0.contains("x86-64") },
                      lines.joined(separator: "\n"))
        XCTAssertFalse(lines.contains { $0.hasPrefix("smoke: ok version") }, "nothing ran")
        XCTAssertTrue(lines.contains("smoke: 0 passed, 2 failed"), lines.joined(separator: "\n"))
    }

    /// An aarch64 file that `file` accepts but that cannot run (the real agent cut short): the
    /// checks that run it fail, so the script does not pass on headers alone.
    func testSmokeFailsOnATruncatedAarch64Binary() throws {
        try requireArtifacts()
        let folder = Subprocess.makeTemporaryDirectory()
        defer { Subprocess.removeTree(folder) }
        let cut = try Subprocess.run("/bin/sh", ["-c", "head -c 65536 \"$0\" > \"$1\" && chmod 755 \"$1\"",
                                                 Self.artifacts + "/carkey-agent", folder + "/carkey-agent"])
        XCTAssertEqual(cut.status, 0, cut.stderr)
        XCTAssertEqual(symlink(Self.artifacts + "/carkey", folder + "/carkey"), 0)
        let (status, lines) = try runSmoke(folder)
        XCTAssertEqual(status, 1, lines.joined(separator: "\n"))
        XCTAssertTrue(lines.contains { $0.hasPrefix("smoke: ok file carkey-agent:") }, "file sees an aarch64 header: \(lines)")
        XCTAssertTrue(lines.contains { $0.hasPrefix("smoke: FAIL version:") }, lines.joined(separator: "\n"))
        XCTAssertTrue(lines.contains { $0.hasPrefix("smoke: FAIL run:") }, lines.joined(separator: "\n"))
    }

    private func figure(_ name: String, in lines: [String]) -> Int? {
        let prefix = "smoke: figure \(name) "
        guard let line = lines.first(where: { $0.hasPrefix(prefix) }) else { return nil }
        return Int(line.dropFirst(prefix.count).prefix { $0.isNumber })
    }

    /// A file-vault car (made by the host's debug build) migrated to a TPM 2.0 by the aarch64
    /// agent, which then runs on it under qemu (the owner unlocks: the identity signs in the
    /// TPM), stops cleanly, starts again and lists its keys.
    func testTheAarch64AgentRunsATPM2VaultUnderQemu() throws {
        try requireArtifacts()
        let swtpmState = Subprocess.makeTemporaryDirectory()
        defer { Subprocess.removeTree(swtpmState) }
        let tpm: TPM2SoftwareTPM
        do { tpm = try TPM2SoftwareTPM(stateFolder: swtpmState) } catch let missing as HarnessUnavailable {
            if getenv("CARKEY_REQUIRE_AARCH64").map({ String(cString: $0) }) == "1" { XCTFail("\(missing)") }
            throw XCTSkip(missing.description)
        }
        defer { tpm.kill() }
        // The harness runs CARKEY_TEST_BINARIES' carkey-agent and carkey: here two wrappers
        // that exec the aarch64 binaries under qemu (exec: signals reach qemu, which passes them on).
        let wrappers = Subprocess.makeTemporaryDirectory()
        defer { Subprocess.removeTree(wrappers); unsetenv("CARKEY_TEST_BINARIES") }
        for name in ["carkey-agent", "carkey"] {
            try Subprocess.write("#!/bin/sh\nexec /usr/bin/qemu-aarch64-static \(Self.artifacts)/\(name) \"$@\"\n", to: wrappers + "/" + name)
            XCTAssertEqual(chmod(wrappers + "/" + name, 0o755), 0)
        }

        let car = AgentHarness()
        try car.start(clockSync: "no")
        let owner = try car.enrollOwner()
        XCTAssertEqual(car.stop(), 0)
        let config = car.folder + "/agent.json"
        try Subprocess.write(#"{"vault": {"provider": "tpm2", "tcti": ""# + tpm.tcti + #""}}"#, to: config)

        setenv("CARKEY_TEST_BINARIES", wrappers, 1)
        let dir = ["--state-dir", car.stateDir, "--config", config]
        let migrated = try car.agentTool(["vault", "migrate", "--to", "tpm2"] + dir + ["--backup", car.folder + "/before-vault.db"])
        XCTAssertEqual(migrated.status, 0, migrated.stdout + migrated.stderr)
        for round in 1...2 {
            let agent = try car.start(clockSync: "no", ["--config", config])
            XCTAssertTrue(agent.stderr.contains("carkey-agent: key vault: tpm2: TPM 2.0 at \(tpm.tcti)"), agent.stderr)
            XCTAssertEqual(try car.phone("unlock", key: owner.path).firstLine, "ok", "round \(round)")
            XCTAssertEqual(car.stop(), 0, "round \(round): a clean stop")
        }
        let keys = try car.agentTool(["keys"] + dir)
        XCTAssertEqual(keys.status, 0, keys.stderr)
        XCTAssertTrue(keys.stdout.contains(try car.keyIDHex(owner.publicHex)), keys.stdout)
    }
}

// The fully static carkey-agent (`make static`, build/static) and the key vaults. A static glibc
// executable that dlopens a PKCS#11 module runs two libcs in one process and crashed in every
// vault path (segmentation faults, "double free" on SIGTERM), so for pkcs11 the static binary
// never loads one: every command that opens that vault stops with one line naming the glibc
// build, without a signal and without writing anything. The tpm2 vault loads nothing (the agent
// speaks TPM 2.0 itself), so the static agent runs every tpm2 path. The glibc build (`make
// glibc`, build/glibc) passes the same vault tests as the debug build (make test runs
// VaultAgentTests against it, and the tpm2 ones against build/static).
//
// Needs build/static (OPENCARKEY_STATIC_BINARIES names another folder), build/glibc
// (OPENCARKEY_GLIBC_BINARIES), swtpm and SoftHSM2; skipped without them unless
// CARKEY_REQUIRE_ARTIFACTS=1.
#if canImport(Glibc)
import Glibc
#endif
import XCTest
import Drivers
import TestHarness

final class StaticBinaryVaultTests: XCTestCase {
    private var cleanups: [() -> Void] = []

    override func tearDown() {
        cleanups.reversed().forEach { $0() }
        cleanups = []
        unsetenv("SOFTHSM2_CONF")
        unsetenv("CARKEY_TEST_BINARIES")
        super.tearDown()
    }

    private static func environment(_ name: String) -> String? {
        getenv(name).map { String(cString: $0) }.flatMap { $0.isEmpty ? nil : $0 }
    }

    private func artifact(_ variable: String, _ folder: String, make: String) throws -> String {
        let path = Self.environment(variable) ?? Subprocess.repositoryRoot + "/" + folder
        return try requireDevice {
            guard access(path + "/carkey-agent", X_OK) == 0, access(path + "/carkey", X_OK) == 0 else {
                throw HarnessUnavailable("no carkey-agent and carkey in \(path): run `\(make)`")
            }
            return path
        }
    }

    /// A swtpm for this test and a vault config naming it in `car`'s folder.
    private func tpmCar(_ car: AgentHarness) throws -> (tpm: TPM2SoftwareTPM, config: String) {
        let state = TestFolders.make(prefix: "opencarkey-swtpm")
        let tpm = try requireDevice { try TPM2SoftwareTPM(stateFolder: state) }
        cleanups.append { tpm.kill(); TestFolders.remove(state) }
        let config = car.folder + "/agent.json"
        try Subprocess.write(#"{"vault": {"provider": "tpm2", "tcti": ""# + tpm.tcti + #""}}"#, to: config)
        return (tpm, config)
    }

    /// Runs each vault path of the static agent on a car whose store the vault `config` seals,
    /// checking the refusal and that the state directory is byte for byte as it was.
    private func checkEveryVaultPathRefuses(_ staticAgent: String, _ harness: AgentHarness, config: String, kind: String) throws {
        let dir = ["--state-dir", harness.stateDir, "--config", config]
        let backupFile = harness.folder + "/\(kind).backup.db"
        let made = try harness.agentTool(["backup"] + dir + ["--out", backupFile])
        XCTAssertEqual(made.status, 0, "the debug build backs the car up: \(made.stderr)")
        let before = try DirectorySnapshot.take(harness.stateDir)

        let paths: [(name: String, arguments: [String])] = [
            ("run", ["run", "--simulate", "--clock-sync", "no"] + dir),
            ("keys", ["keys"] + dir),
            ("events", ["events"] + dir),
            ("outbox", ["outbox"] + dir),
            ("backup", ["backup"] + dir + ["--out", harness.folder + "/static.backup.db"]),
            ("restore", ["restore"] + dir + ["--from", backupFile]),
            ("vault migrate", ["vault", "migrate", "--to", kind] + dir),
            ("vault migrate --new-identity", ["vault", "migrate", "--to", kind, "--new-identity"] + dir),
        ]
        for path in paths {
            let result = try Subprocess.run(staticAgent, path.arguments)
            let what = "\(kind) \(path.name): status \(result.status), stderr \(result.stderr)"
            XCTAssertTrue(result.status == 1 || result.status == 78, "refused with an exit status, not a signal: \(what)")
            XCTAssertTrue(result.stderr.contains("fully static") && result.stderr.contains("make glibc"), "names the glibc build: \(what)")
            XCTAssertEqual(result.stderr.split(separator: "\n").count, 1, "one line: \(what)")
            XCTAssertEqual(try DirectorySnapshot.take(harness.stateDir), before, "nothing written: \(what)")
        }
        XCTAssertNotEqual(access(harness.folder + "/static.backup.db", F_OK), 0, "no backup file left behind")
    }

    func testTheStaticAgentRefusesEveryVaultPathNamingTheGlibcBuildAndWritesNothing() throws {
        let staticAgent = try artifact("OPENCARKEY_STATIC_BINARIES", "build/static", make: "make static") + "/carkey-agent"
        let description = try Subprocess.run("/usr/bin/file", ["-b", staticAgent]).stdout
        XCTAssertTrue(description.contains("statically linked"), "build/static holds the static binary: \(description)")

        // A PKCS#11 car (SoftHSM2).
        let token = try requireDevice { try SoftHSMToken(label: "carkey-agent") }
        cleanups.append { token.remove() }
        let tokenCar = AgentHarness()
        let pinFile = tokenCar.folder + "/pin"
        try Files.writeAtomically(token.pin + Array("\n".utf8), to: pinFile, mode: 0o600)
        let tokenConfig = tokenCar.folder + "/agent.json"
        try Subprocess.write(#"{"vault": {"provider": "pkcs11", "module": ""# + SoftHSMToken.modulePath + #"", "token": ""#
                             + token.label + #"", "pinFile": ""# + pinFile + #""}}"#, to: tokenConfig)
        try tokenCar.start(clockSync: "no", ["--config", tokenConfig])
        _ = try tokenCar.enrollOwner()
        XCTAssertEqual(tokenCar.stop(), 0)
        try checkEveryVaultPathRefuses(staticAgent, tokenCar, config: tokenConfig, kind: "pkcs11")
    }

    /// The vault boards' binary: the same release code linked against the system's glibc (and
    /// the Swift runtime statically), so dlopen works; VaultAgentTests run against it.
    func testTheGlibcBuildIsDynamicallyLinkedAndLoadsTheVault() throws {
        let glibc = try artifact("OPENCARKEY_GLIBC_BINARIES", "build/glibc", make: "make glibc")
        let description = try Subprocess.run("/usr/bin/file", ["-b", glibc + "/carkey-agent"]).stdout
        XCTAssertTrue(description.contains("dynamically linked") && description.contains("interpreter"), description)
        let libraries = try Subprocess.run("/usr/bin/ldd", [glibc + "/carkey-agent"]).stdout
        XCTAssertFalse(libraries.contains("libswiftCore"), "the Swift runtime is linked in, not needed on the board: \(libraries)")

        let car = AgentHarness()
        let (tpm, config) = try tpmCar(car)
        let agent = try BackgroundProcess(glibc + "/carkey-agent", ["run", "--simulate", "--state-dir", car.stateDir, "--clock-sync", "no", "--config", config])
        let up = agent.wait(timeoutSeconds: 30) { agent.stderr.contains("carkey-agent: control socket") || !agent.isRunning }
        XCTAssertTrue(up && agent.isRunning, agent.stderr)
        XCTAssertTrue(agent.stderr.contains("carkey-agent: key vault: tpm2: TPM 2.0 at \(tpm.tcti)"), agent.stderr)
        XCTAssertEqual(agent.stop(), 0, "a clean stop, no crash on exit: \(agent.stderrTail)")
    }

    /// The static agent and a TPM 2.0: a file-vault car made by the debug build is migrated,
    /// runs (the owner unlocks), and every store tool opens it; a start against a dead TPM or
    /// another board's TPM is the documented one-line refusal, with nothing written.
    func testTheStaticAgentRunsEveryTPM2VaultPath() throws {
        let binaries = try artifact("OPENCARKEY_STATIC_BINARIES", "build/static", make: "make static")
        let car = AgentHarness()
        try car.start(clockSync: "no")
        let owner = try car.enrollOwner()
        XCTAssertEqual(car.stop(), 0)
        let (tpm, config) = try tpmCar(car)
        // From here on the harness runs build/static's carkey-agent and carkey.
        setenv("CARKEY_TEST_BINARIES", binaries, 1)
        let dir = ["--state-dir", car.stateDir, "--config", config]
        let migrated = try car.agentTool(["vault", "migrate", "--to", "tpm2"] + dir + ["--backup", car.folder + "/before-vault.db"])
        XCTAssertEqual(migrated.status, 0, migrated.stdout + migrated.stderr)
        XCTAssertEqual(access(car.stateDir + "/tpm2-storage.priv", F_OK), 0, "the storage key is sealed by the TPM")

        let running = try car.start(clockSync: "no", ["--config", config])
        XCTAssertTrue(running.stderr.contains("carkey-agent: key vault: tpm2: TPM 2.0 at \(tpm.tcti)"), running.stderr)
        XCTAssertEqual(try car.phone("unlock", key: owner.path).firstLine, "ok", "the static agent signs with the TPM identity")
        XCTAssertEqual(car.stop(), 0, "a clean stop, no crash on exit")

        let ownerID = try car.keyIDHex(owner.publicHex)
        let keys = try car.agentTool(["keys"] + dir)
        XCTAssertEqual(keys.status, 0, keys.stderr)
        XCTAssertTrue(keys.stdout.contains(ownerID), keys.stdout)
        for tool in [["events"], ["outbox"], ["backup", "--out", car.folder + "/static.backup.db"]] {
            let result = try car.agentTool(tool + dir)
            XCTAssertEqual(result.status, 0, "\(tool[0]): \(result.stderr)")
        }
        let restored = try car.agentTool(["restore"] + dir + ["--from", car.folder + "/static.backup.db"])
        XCTAssertEqual(restored.status, 0, restored.stdout + restored.stderr)
        try car.start(clockSync: "no", ["--config", config])
        XCTAssertEqual(try car.phone("unlock", key: owner.path).firstLine, "ok", "after the restore")
        XCTAssertEqual(car.stop(), 0)

        // Another board's TPM, then no TPM: one line each, nothing written.
        let otherState = TestFolders.make(prefix: "opencarkey-swtpm")
        let other = try requireDevice { try TPM2SoftwareTPM(stateFolder: otherState) }
        cleanups.append { other.kill(); TestFolders.remove(otherState) }
        let otherConfig = car.folder + "/other.json"
        try Subprocess.write(#"{"vault": {"provider": "tpm2", "tcti": ""# + other.tcti + #""}}"#, to: otherConfig)
        tpm.kill()
        for (what, configPath, expected) in [("another TPM", otherConfig, "does not belong to this device"), ("a dead TPM", config, "not available")] {
            let before = try DirectorySnapshot.take(car.stateDir)
            let result = try Subprocess.run(binaries + "/carkey-agent",
                                            ["run", "--simulate", "--clock-sync", "no", "--state-dir", car.stateDir, "--config", configPath])
            XCTAssertEqual(result.status, 1, "\(what): \(result.stderr)")
            XCTAssertTrue(result.stderr.contains("key vault: tpm2") || result.stderr.contains("tpm2-"), "\(what): \(result.stderr)")
            XCTAssertTrue(result.stderr.contains(expected), "\(what): \(result.stderr)")
            XCTAssertEqual(result.stderr.split(separator: "\n").count, 1, "one line: \(result.stderr)")
            XCTAssertEqual(try DirectorySnapshot.take(car.stateDir), before, "nothing written: \(what)")
        }
    }
}

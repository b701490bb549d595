// The fully static carkey-agent (`make static`, build/static) and the key vaults. A static glibc
// executable that dlopened tss2 or a PKCS#11 module ran two libcs in one process and crashed in
// every vault path (segmentation faults, "double free" on SIGTERM). Now it loads nothing: the
// agent speaks TPM 2.0 itself, and a PKCS#11 module is loaded by carkey-pkcs11-bridge, a separate
// dynamically linked process (docs/pkcs11-bridge.md). So the static agent runs every vault path
// of both, checked here end to end; the glibc build (`make glibc`, build/glibc) is checked to
// be dynamically linked and to load a vault too (make test runs VaultAgentTests against both).
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

    /// A vault config naming a SoftHSM2 token through a PIN file holding `pin`, in `car`'s folder.
    private func pkcs11Config(_ car: AgentHarness, _ token: SoftHSMToken, pin: [UInt8], name: String) throws -> String {
        let pinFile = car.folder + "/" + name + ".pin"
        try Files.writeAtomically(pin + Array("\n".utf8), to: pinFile, mode: 0o600)
        let config = car.folder + "/" + name + ".json"
        try Subprocess.write(#"{"vault": {"provider": "pkcs11", "module": ""# + SoftHSMToken.modulePath + #"", "token": ""#
                             + token.label + #"", "pinFile": ""# + pinFile + #""}}"#, to: config)
        return config
    }

    /// The static agent with a SoftHSM2 token through build/static/carkey-pkcs11-bridge: it
    /// migrates a file-vault car onto the token, runs and unlocks, stops cleanly on SIGTERM
    /// (no "double free"), and keys, events, outbox, backup and restore open the vault; a wrong
    /// PIN refuses with the documented words and writes nothing.
    func testTheStaticAgentUsesAPKCS11TokenThroughTheBridge() throws {
        let folder = try artifact("OPENCARKEY_STATIC_BINARIES", "build/static", make: "make static")
        let staticAgent = folder + "/carkey-agent"
        try requireDevice {
            guard access(folder + "/carkey-pkcs11-bridge", X_OK) == 0 else {
                throw HarnessUnavailable("no carkey-pkcs11-bridge in \(folder): run `make static`")
            }
        }
        let token = try requireDevice { try SoftHSMToken(label: "carkey-static") }
        cleanups.append { token.remove() }
        func clean(_ result: ProcessResult, _ what: String) {
            XCTAssertEqual(result.status, 0, "\(what): \(result.stdout) \(result.stderr)")
            XCTAssertFalse(result.stderr.contains("double free") || result.stderr.contains("Segmentation"), "\(what): \(result.stderr)")
        }

        // A car on the file vault, made and enrolled by the debug build; the static agent moves it.
        let car = AgentHarness()
        try car.start(clockSync: "no")
        let owner = try car.enrollOwner()
        XCTAssertEqual(car.stop(), 0)
        let config = try pkcs11Config(car, token, pin: token.pin, name: "agent")
        let dir = ["--state-dir", car.stateDir, "--config", config]
        clean(try Subprocess.run(staticAgent, ["vault", "migrate", "--to", "pkcs11"] + dir + ["--backup", car.folder + "/before.db"]), "vault migrate")
        XCTAssertEqual(access(car.stateDir + "/pkcs11-storage.key", F_OK), 0, "the storage key is wrapped by the token")

        func runAndUnlock(_ what: String) throws {
            let agent = try BackgroundProcess(staticAgent, ["run", "--simulate", "--clock-sync", "no"] + dir)
            let up = agent.wait(timeoutSeconds: 30) { agent.stderr.contains("carkey-agent: control socket") || !agent.isRunning }
            XCTAssertTrue(up && agent.isRunning, "\(what): \(agent.stderr)")
            XCTAssertTrue(agent.stderr.contains("key vault: pkcs11: PKCS#11 module \(SoftHSMToken.modulePath), token \(token.label)")
                          && agent.stderr.contains("loaded by \(folder)/carkey-pkcs11-bridge"), agent.stderr)
            XCTAssertTrue(try car.phone("unlock", key: owner.path).stdout.hasPrefix("ok"), "\(what): the owner unlocks")
            XCTAssertEqual(agent.stop(), 0, "\(what): SIGTERM is a clean exit: \(agent.stderrTail)")
            XCTAssertFalse(agent.stderr.contains("double free"), agent.stderr)
        }
        try runAndUnlock("run")

        for command in ["keys", "events", "outbox"] { clean(try Subprocess.run(staticAgent, [command] + dir), command) }
        let backupFile = car.folder + "/static.backup.db"
        clean(try Subprocess.run(staticAgent, ["backup"] + dir + ["--out", backupFile]), "backup")
        clean(try Subprocess.run(staticAgent, ["restore"] + dir + ["--from", backupFile]), "restore")
        try runAndUnlock("run after restore")

        // A wrong PIN: refused with the documented words, nothing written, not retried.
        let wrong = try pkcs11Config(car, token, pin: Array("999999".utf8), name: "wrong")
        let before = try DirectorySnapshot.take(car.stateDir)
        let refused = try Subprocess.run(staticAgent, ["run", "--simulate", "--clock-sync", "no", "--state-dir", car.stateDir, "--config", wrong])
        XCTAssertEqual(refused.status, 78, refused.stderr)
        XCTAssertTrue(refused.stderr.contains("refused access: wrong PIN") && refused.stderr.contains("not retried"), refused.stderr)
        XCTAssertFalse(refused.stderr.contains("999999"), "the PIN is never printed")
        XCTAssertEqual(try DirectorySnapshot.take(car.stateDir), before, "nothing written")
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

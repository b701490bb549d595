// The key vaults in the real agent (issue 18): `carkey-agent run --simulate` with a TPM 2.0
// (swtpm) and a PKCS#11 token (SoftHSM2), an owner enrolled and unlocking across a restart; the
// refusals (a state directory on another TPM, a wrong PIN file, a removed TPM, the file vault
// on a vault-sealed store); and `carkey-agent vault migrate` from the storage.key file, with
// and without a new identity. Skipped without swtpm/SoftHSM2 unless CARKEY_REQUIRE_ARTIFACTS=1.
#if canImport(Glibc)
import Glibc
#endif
import XCTest
import Drivers
import Protocol
import TestHarness

final class VaultAgentTests: XCTestCase {
    private var cleanups: [() -> Void] = []

    override func tearDown() {
        cleanups.reversed().forEach { $0() }
        cleanups = []
        unsetenv("SOFTHSM2_CONF")
        super.tearDown()
    }

    // MARK: Devices and config

    private func startTPM() throws -> TPM2SoftwareTPM {
        let state = TestFolders.make(prefix: "opencarkey-swtpm")
        let tpm = try requireDevice { try TPM2SoftwareTPM(stateFolder: state) }
        cleanups.append { tpm.kill(); TestFolders.remove(state) }
        return tpm
    }

    private func makeToken(_ label: String = "carkey-agent") throws -> SoftHSMToken {
        let token = try requireDevice { try SoftHSMToken(label: label) }
        cleanups.append { token.remove() }
        return token
    }

    private func writeConfig(_ harness: AgentHarness, _ vault: String, name: String = "agent.json") throws -> String {
        let path = harness.folder + "/" + name
        try Subprocess.write(#"{"vault": "# + vault + "}", to: path)
        return path
    }

    private func tpm2Config(_ harness: AgentHarness, _ tpm: TPM2SoftwareTPM, name: String = "agent.json") throws -> String {
        try writeConfig(harness, #"{"provider": "tpm2", "tcti": ""# + tpm.tcti + #""}"#, name: name)
    }

    private func pkcs11Config(_ harness: AgentHarness, _ token: SoftHSMToken, pin: String, name: String = "agent.json") throws -> String {
        let pinFile = harness.folder + "/" + name + ".pin"
        try Files.writeAtomically(Array((pin + "\n").utf8), to: pinFile, mode: 0o600)
        return try writeConfig(harness, #"{"provider": "pkcs11", "module": ""# + SoftHSMToken.modulePath + #"", "token": ""#
                               + token.label + #"", "pinFile": ""# + pinFile + #""}"#, name: name)
    }

    /// An agent start that must fail: its exit status and stderr (never left running).
    private func failedStart(stateDir: String, config: String) throws -> (status: Int32?, stderr: String) {
        let process = try BackgroundProcess("carkey-agent", ["run", "--simulate", "--state-dir", stateDir, "--clock-sync", "no", "--config", config])
        let exited = process.wait(timeoutSeconds: 30) { !process.isRunning }
        let status = process.stop()
        XCTAssertTrue(exited, "the agent started where it must refuse: \(process.stderr)")
        return (status, process.stderr)
    }

    private func unlock(_ harness: AgentHarness, _ key: String, pinned: Bool = false) throws -> ProcessResult {
        try harness.phone("unlock", key: key, pinned: pinned)
    }

    private func exists(_ path: String) -> Bool { access(path, F_OK) == 0 }

    /// A refused start that must leave `stateDir` byte-identical (names, sizes, mtimes, contents).
    /// `sidecars`: carkey.db-shm is there to be compared (an agent stopped on this directory).
    private func refusedStartWritesNothing(stateDir: String, config: String, sidecars: Bool = true, file: StaticString = #filePath,
                                           line: UInt = #line) throws -> (status: Int32?, stderr: String) {
        let before = try DirectorySnapshot.take(stateDir)
        if sidecars { XCTAssertNotNil(before["carkey.db-shm"], "a stopped agent leaves carkey.db-shm: the check covers it", file: file, line: line) }
        let refused = try failedStart(stateDir: stateDir, config: config)
        let after = try DirectorySnapshot.take(stateDir)
        XCTAssertEqual(Set(after.keys), Set(before.keys), "no file added or removed: \(refused.stderr)", file: file, line: line)
        for (name, was) in before where after[name] != was {
            XCTFail("\(name) changed by a refused start (\(refused.stderr.trimmingCharacters(in: .whitespacesAndNewlines)))", file: file, line: line)
        }
        return refused
    }

    /// Whether the store holds the sealed identity row (read without the key: the row's presence).
    private func identityRowCount(_ stateDir: String) throws -> Int64 {
        let connection = try Connection(path: stateDir + "/carkey.db", create: false)
        defer { connection.close() }
        guard case .integer(let count)? = try connection.scalar("SELECT COUNT(*) FROM sealed_records WHERE kind = 'identity' AND id = ?1",
                                                                 [.blob(CarStore.identityRecordID)]) else { return -1 }
        return count
    }

    // MARK: TPM 2.0

    func testTPM2VaultCarEnrollsUnlocksAndRestarts() throws {
        let tpm = try startTPM()
        let harness = AgentHarness()
        let config = try tpm2Config(harness, tpm)
        let first = try harness.start(clockSync: "no", ["--config", config])
        XCTAssertTrue(first.stderr.contains("carkey-agent: key vault: tpm2: TPM 2.0 at \(tpm.tcti)"), first.stderr)
        XCTAssertTrue(first.stderr.contains("carkey-agent: key vault: identity signature ") && first.stderr.contains("car-wide handshake budget"),
                      "the budget follows the device's measured signing time: \(first.stderr)")
        let owner = try harness.enrollOwner()
        XCTAssertEqual(try unlock(harness, owner.path).firstLine, "ok")
        XCTAssertEqual(harness.stop(), 0)

        XCTAssertFalse(exists(harness.stateDir + "/storage.key"), "no storage key file with a TPM vault")
        XCTAssertTrue(exists(harness.stateDir + "/tpm2-storage.pub") && exists(harness.stateDir + "/tpm2-identity.pub"))
        XCTAssertTrue(exists(harness.stateDir + "/car-identity.pub"), "phones still pin the published key")
        XCTAssertEqual(try identityRowCount(harness.stateDir), 0, "the identity lives in the TPM, not in the store")

        try harness.start(clockSync: "no", ["--config", config])
        XCTAssertEqual(try unlock(harness, owner.path).firstLine, "ok", "same identity and keys after a restart")
        XCTAssertEqual(harness.stop(), 0)

        // The state directory copied next to another TPM: refused, naming the fix.
        let other = try startTPM()
        let copy = harness.folder + "/copied-state"
        XCTAssertEqual(try Subprocess.run("/bin/cp", ["-a", harness.stateDir, copy]).status, 0)
        let otherConfig = try tpm2Config(harness, other, name: "other.json")
        let refused = try refusedStartWritesNothing(stateDir: copy, config: otherConfig)
        XCTAssertEqual(refused.status, 1, refused.stderr)
        XCTAssertTrue(refused.stderr.contains("does not belong to this device"), refused.stderr)
        XCTAssertEqual(refused.stderr.split(separator: "\n").count, 1, "one line: \(refused.stderr)")

        // The TPM removed: a clear error, exit 1.
        tpm.kill()
        let removed = try refusedStartWritesNothing(stateDir: harness.stateDir, config: config)
        XCTAssertEqual(removed.status, 1, removed.stderr)
        XCTAssertTrue(removed.stderr.contains("key vault: tpm2:") && removed.stderr.contains("not available"), removed.stderr)
        XCTAssertEqual(removed.stderr.split(separator: "\n").count, 1, "one line: \(removed.stderr)")
        print("vault: copied state on another TPM -> \(refused.stderr.trimmingCharacters(in: .whitespacesAndNewlines)); removed TPM -> \(removed.stderr.trimmingCharacters(in: .whitespacesAndNewlines))")
    }

    // MARK: Power cuts

    /// Ten unclean power cuts in a row, each after the agent used its keys (an unlock signs
    /// with the identity; the start unsealed the storage key): the TPM and the agent killed,
    /// the TPM started again on the same state and port. Every time the car starts and the
    /// owner unlocks; the TPM's dictionary-attack counter stays 0 (swtpm locks out at 3).
    func testTenUncleanPowerCutsInARowStillStartTheCarAndUnlock() throws {
        let tpm = try startTPM()
        let harness = AgentHarness()
        let config = try tpm2Config(harness, tpm)
        try harness.start(clockSync: "no", ["--config", config])
        let owner = try harness.enrollOwner()
        XCTAssertEqual(try unlock(harness, owner.path).firstLine, "ok")
        for cut in 1...10 {
            tpm.kill()
            harness.kill()
            try tpm.powerCycle()
            let started = try harness.start(clockSync: "no", ["--config", config])
            guard started.isRunning else { return XCTFail("cut \(cut): the car did not start: \(started.stderr)") }
            XCTAssertEqual(try unlock(harness, owner.path).firstLine, "ok", "cut \(cut): the owner unlocks")
        }
        XCTAssertEqual(harness.stop(), 0)
        if let counter = tpm.lockoutCounter() {
            XCTAssertEqual(counter, 0, "no cut counted as a failed authorisation")
            print("vault: DA lockout counter after 10 unclean power cuts: \(counter)")
        }
    }

    /// The TPM dies under a running agent and comes back on the same port and state: unlocks
    /// fail meanwhile, the log names the TPM and the cause once, and the owner unlocks again
    /// without the agent being restarted.
    func testATPMThatDiesAtRunTimeIsLoggedOnceAndReconnected() throws {
        let tpm = try startTPM()
        let harness = AgentHarness()
        let config = try tpm2Config(harness, tpm)
        let agent = try harness.start(clockSync: "no", ["--config", config])
        let owner = try harness.enrollOwner()
        XCTAssertEqual(try unlock(harness, owner.path).firstLine, "ok")
        tpm.kill()
        for attempt in 1...3 {
            XCTAssertNotEqual(try unlock(harness, owner.path).firstLine, "ok", "attempt \(attempt) with the TPM gone")
        }
        let lost = agent.stderr.components(separatedBy: "stopped answering").count - 1
        XCTAssertEqual(lost, 1, "one cause line, not one per session: \(agent.stderr)")
        XCTAssertTrue(agent.stderr.contains("key vault: tpm2: TPM 2.0 at \(tpm.tcti) stopped answering"), agent.stderr)
        try tpm.powerCycle()
        var result = ""
        let deadline = Monotonic.seconds() + 30
        while result != "ok" && Monotonic.seconds() < deadline {
            result = try unlock(harness, owner.path).firstLine
            if result != "ok" { usleep(200_000) }
        }
        XCTAssertEqual(result, "ok", "the owner unlocks once the TPM is back: \(agent.stderr)")
        XCTAssertTrue(agent.isRunning, "without restarting the agent")
        XCTAssertTrue(agent.stderr.contains("answers again"), agent.stderr)
        XCTAssertEqual(harness.stop(), 0)
        print("vault: TPM lost and back: \(agent.stderr.split(separator: "\n").filter { $0.contains("key vault: tpm2: TPM") }.joined(separator: " | "))")
    }

    // MARK: Store tools on a vault-sealed store

    /// keys, events, outbox, backup and restore open the vault the config names; without the
    /// config, or on another TPM, they stop with one line naming the fix. A backup of one car
    /// does not restore into another car's directory, and a restore onto a directory without
    /// the vault files is refused before anything is written.
    func testStoreToolsOpenTheVaultTheConfigNames() throws {
        let tpm = try startTPM()
        let harness = AgentHarness()
        let config = try tpm2Config(harness, tpm)
        try harness.start(clockSync: "no", ["--config", config])
        let owner = try harness.enrollOwner()
        XCTAssertEqual(try unlock(harness, owner.path).firstLine, "ok")
        XCTAssertEqual(harness.stop(), 0)
        let dir = ["--state-dir", harness.stateDir]
        let ownerID = try harness.keyIDHex(owner.publicHex)

        let blind = try harness.agentTool(["keys"] + dir + ["--config", harness.folder + "/missing.json"])
        XCTAssertEqual(blind.status, 1, blind.stdout)
        XCTAssertTrue(blind.stderr.contains("sealed by a tpm2 key vault") && blind.stderr.contains("--config"), blind.stderr)
        XCTAssertEqual(blind.stderr.split(separator: "\n").count, 1, "one line: \(blind.stderr)")

        let keys = try harness.agentTool(["keys"] + dir + ["--config", config])
        XCTAssertEqual(keys.status, 0, keys.stderr)
        XCTAssertTrue(keys.stdout.contains("\(ownerID)  owner"), keys.stdout)
        let events = try harness.agentTool(["events"] + dir + ["--config", config])
        XCTAssertEqual(events.status, 0, events.stderr)
        XCTAssertTrue(events.stdout.contains("enrollment"), events.stdout)
        let outbox = try harness.agentTool(["outbox"] + dir + ["--config", config])
        XCTAssertEqual(outbox.status, 0, outbox.stderr)
        XCTAssertTrue(outbox.stdout.hasPrefix("depth: "), outbox.stdout)

        let backupFile = harness.folder + "/car.backup.db"
        let backup = try harness.agentTool(["backup"] + dir + ["--config", config, "--out", backupFile])
        XCTAssertEqual(backup.status, 0, backup.stderr)
        let published = try P256PublicKey(pemRepresentation: String(decoding: try Files.read(harness.stateDir + "/car-identity.pub"), as: UTF8.self))
        XCTAssertTrue(backup.stdout.contains("car identity \(KeyID(publicKey: published))"), "the device identity is the car's: \(backup.stdout)")
        XCTAssertTrue(backup.stdout.contains("tpm2-storage.pub") && !backup.stdout.contains("storage.key,"), backup.stdout)

        // Another car on the same TPM: its own storage key, so car 1's backup is refused there.
        let second = AgentHarness()
        let secondConfig = try tpm2Config(second, tpm)
        try second.start(clockSync: "no", ["--config", secondConfig])
        XCTAssertEqual(second.stop(), 0)
        let foreign = try second.agentTool(["restore", "--state-dir", second.stateDir, "--config", secondConfig, "--from", backupFile])
        XCTAssertEqual(foreign.status, 1, foreign.stdout)
        XCTAssertTrue(foreign.stderr.contains("not sealed by this tpm2 key vault's storage key"), foreign.stderr)
        XCTAssertFalse(exists(second.stateDir + "/carkey.db.before-restore"), "nothing set aside")

        // The state directory on another TPM: the tool names the device mismatch.
        let other = try startTPM()
        let otherConfig = try tpm2Config(harness, other, name: "other.json")
        let copy = harness.folder + "/copied-state"
        XCTAssertEqual(try Subprocess.run("/bin/cp", ["-a", harness.stateDir, copy]).status, 0)
        let elsewhere = try harness.agentTool(["keys", "--state-dir", copy, "--config", otherConfig])
        XCTAssertEqual(elsewhere.status, 1, elsewhere.stdout)
        XCTAssertTrue(elsewhere.stderr.contains("does not belong to this device"), elsewhere.stderr)

        // Restore onto an emptied directory: the vault files come first.
        let emptied = harness.folder + "/emptied"
        XCTAssertEqual(mkdir(emptied, 0o700), 0)
        let early = try harness.agentTool(["restore", "--state-dir", emptied, "--config", config, "--from", backupFile])
        XCTAssertEqual(early.status, 1, early.stdout)
        XCTAssertTrue(early.stderr.contains("holds none of its files") && early.stderr.contains("tpm2-storage.pub"), early.stderr)
        XCTAssertFalse(exists(emptied + "/tpm2-storage.pub") || exists(emptied + "/carkey.db"), "the tool made no key and no store")

        // With the vault files back, the backup restores and the owner unlocks.
        for name in ["tpm2-storage.pub", "tpm2-storage.priv", "tpm2-identity.pub", "tpm2-identity.priv", "car-identity.pub"] {
            XCTAssertEqual(try Subprocess.run("/bin/cp", ["-a", harness.stateDir + "/" + name, emptied + "/" + name]).status, 0, name)
        }
        let restored = try harness.agentTool(["restore", "--state-dir", emptied, "--config", config, "--from", backupFile])
        XCTAssertEqual(restored.status, 0, restored.stderr)
        XCTAssertTrue(restored.stdout.contains("car identity \(KeyID(publicKey: published))"), restored.stdout)
        let restoredCar = AgentHarness(stateDirectory: emptied)
        try restoredCar.start(clockSync: "no", ["--config", config])
        XCTAssertEqual(try restoredCar.phone("unlock", key: owner.path).firstLine, "ok", "the restored car knows the owner")
        XCTAssertEqual(restoredCar.stop(), 0)
    }

    // MARK: Config

    func testBadVaultSettingsAreOneLineNamingTheKey() throws {
        let harness = AgentHarness()
        let cases: [(String, String)] = [
            (#"{"provider": "hsm"}"#, "key 'vault.provider': expected one of file, tpm2, pkcs11"),
            (#"{"provider": "tpm2", "pcrs": [99]}"#, "key 'vault.pcrs'"),
            (#"{"provider": "pkcs11", "module": "/x.so", "token": "car", "pin": "123456"}"#, "unknown key 'vault.pin'"),
            (#"{"provider": "pkcs11", "module": "/x.so", "token": "car"}"#, "key 'vault.pinFile'"),
            (#"{"provider": "file", "tcti": "device:/dev/tpmrm0"}"#, "key 'vault.tcti'"),
        ]
        for (vault, expected) in cases {
            let config = try writeConfig(harness, vault)
            let result = try harness.agentTool(["run", "--simulate", "--config", config, "--state-dir", harness.stateDir])
            XCTAssertEqual(result.status, 2, vault)
            XCTAssertTrue(result.stderr.contains(expected), "\(vault): \(result.stderr)")
            XCTAssertEqual(result.stderr.split(separator: "\n").count, 1, "one line: \(result.stderr)")
            XCTAssertFalse(result.stderr.contains("123456"), "values are never echoed")
        }
        XCTAssertFalse(exists(harness.stateDir), "nothing written")
    }

    // MARK: PKCS#11

    func testPKCS11VaultCarEnrollsUnlocksAndRestarts() throws {
        let token = try makeToken()
        let harness = AgentHarness()
        let config = try pkcs11Config(harness, token, pin: String(decoding: token.pin, as: UTF8.self))
        let first = try harness.start(clockSync: "no", ["--config", config])
        XCTAssertTrue(first.stderr.contains("carkey-agent: key vault: pkcs11: PKCS#11 module \(SoftHSMToken.modulePath), token \(token.label)"), first.stderr)
        let owner = try harness.enrollOwner()
        XCTAssertEqual(try unlock(harness, owner.path).firstLine, "ok")
        XCTAssertEqual(harness.stop(), 0)
        XCTAssertFalse(exists(harness.stateDir + "/storage.key"))
        XCTAssertEqual(try identityRowCount(harness.stateDir), 0)

        let second = try harness.start(clockSync: "no", ["--config", config])
        XCTAssertEqual(try unlock(harness, owner.path).firstLine, "ok")
        XCTAssertFalse(second.stdout.contains(String(decoding: token.pin, as: UTF8.self)) || second.stderr.contains(String(decoding: token.pin, as: UTF8.self)),
                       "the PIN is never logged")
        XCTAssertEqual(harness.stop(), 0)
    }

    /// A bridge that is missing, or that dies at once, stops the start with one line naming
    /// it and the fix, and writes nothing (the vault opens before the store).
    func testPKCS11BridgeMissingOrDyingStopsTheStartNamingItAndWritesNothing() throws {
        let token = try makeToken()
        let harness = AgentHarness()
        let config = try pkcs11Config(harness, token, pin: String(decoding: token.pin, as: UTF8.self))
        try harness.start(clockSync: "no", ["--config", config])
        XCTAssertEqual(harness.stop(), 0)
        let pinFile = config + ".pin"
        func bridgeConfig(_ bridge: String, name: String) throws -> String {
            try writeConfig(harness, #"{"provider": "pkcs11", "module": ""# + SoftHSMToken.modulePath + #"", "token": ""#
                            + token.label + #"", "pinFile": ""# + pinFile + #"", "bridge": ""# + bridge + #""}"#, name: name)
        }
        let missing = harness.folder + "/nowhere/carkey-pkcs11-bridge"
        let gone = try refusedStartWritesNothing(stateDir: harness.stateDir, config: try bridgeConfig(missing, name: "missing.json"))
        XCTAssertEqual(gone.status, 1, gone.stderr)
        XCTAssertTrue(gone.stderr.contains("key vault: pkcs11: PKCS#11 bridge \(missing) not available") && gone.stderr.contains("\"bridge\" key"), gone.stderr)
        XCTAssertEqual(gone.stderr.split(separator: "\n").count, 1, gone.stderr)

        let dying = harness.folder + "/dies/carkey-pkcs11-bridge"
        XCTAssertEqual(mkdir(harness.folder + "/dies", 0o700), 0)
        try Subprocess.write("#!/bin/sh\nexit 3\n", to: dying)
        XCTAssertEqual(chmod(dying, 0o755), 0)
        let died = try refusedStartWritesNothing(stateDir: harness.stateDir, config: try bridgeConfig(dying, name: "dies.json"))
        XCTAssertEqual(died.status, 1, died.stderr)
        XCTAssertTrue(died.stderr.contains("PKCS#11 bridge \(dying) not available") && died.stderr.contains("exited with status 3"), died.stderr)
    }

    /// The agent's carkey-pkcs11-bridge children (their parent PID, from /proc/PID/stat).
    private func bridges(of agent: pid_t) throws -> [pid_t] {
        try FileManager.default.contentsOfDirectory(atPath: "/proc").compactMap { Int32($0) }.filter { pid in
            guard let stat = try? String(contentsOfFile: "/proc/\(pid)/stat", encoding: .utf8),
                  let close = stat.range(of: ") ", options: .backwards) else { return false }
            let name = stat[stat.startIndex..<close.lowerBound]
            let fields = stat[close.upperBound...].split(separator: " ")
            return name.hasSuffix("(carkey-pkcs11-b") && fields.count > 1 && Int32(fields[1]) == agent
        }
    }

    /// The bridge never outlives the agent: a SIGKILLed agent (no clean stop runs) takes its
    /// bridge with it (PR_SET_PDEATHSIG, and end of file on the bridge's stdin).
    func testPKCS11BridgeDiesWithTheAgent() throws {
        let token = try makeToken()
        let harness = AgentHarness()
        let config = try pkcs11Config(harness, token, pin: String(decoding: token.pin, as: UTF8.self))
        let agent = try harness.start(clockSync: "no", ["--config", config])
        let children = try bridges(of: agent.pid)
        XCTAssertEqual(children.count, 1, "one bridge for the vault")
        XCTAssertEqual(harness.kill(), 128 + SIGKILL)
        let deadline = Date().addingTimeInterval(5)
        while Date() < deadline, children.contains(where: { kill($0, 0) == 0 }) { usleep(20_000) }
        XCTAssertFalse(children.contains { kill($0, 0) == 0 }, "the bridge is gone with the agent")
    }

    func testWrongPINFileStopsTheStartNamingItAndWritesNothing() throws {
        let token = try makeToken()
        let harness = AgentHarness()
        let config = try pkcs11Config(harness, token, pin: "999999")
        let refused = try failedStart(stateDir: harness.stateDir, config: config)
        XCTAssertEqual(refused.status, 78, "EX_CONFIG, which the unit does not restart (each restart would spend a PIN try): \(refused.stderr)")
        XCTAssertTrue(refused.stderr.contains("not retried"), refused.stderr)
        XCTAssertTrue(refused.stderr.contains("key vault: pkcs11:") && refused.stderr.contains(config + ".pin"), refused.stderr)
        XCTAssertFalse(refused.stderr.contains("999999"), "the PIN is never printed")
        XCTAssertFalse(exists(harness.stateDir), "nothing written before the vault opened")

        // A PIN file others can read is refused before the token is asked.
        XCTAssertEqual(chmod(config + ".pin", 0o644), 0)
        let loose = try failedStart(stateDir: harness.stateDir, config: config)
        XCTAssertEqual(loose.status, 1, loose.stderr)
        XCTAssertTrue(loose.stderr.contains("mode 644") && loose.stderr.contains("chmod"), loose.stderr)
    }

    // MARK: Migration

    /// A car on the file vault with an enrolled owner who unlocked once; the agent stopped.
    private func fileVaultCar(_ harness: AgentHarness) throws -> (path: String, publicHex: String) {
        try harness.start()
        let owner = try harness.enrollOwner()
        XCTAssertEqual(try unlock(harness, owner.path).firstLine, "ok")
        XCTAssertEqual(harness.stop(), 0)
        XCTAssertTrue(exists(harness.stateDir + "/storage.key"))
        return owner
    }

    private func migrate(_ harness: AgentHarness, config: String, _ extra: [String] = []) throws -> ProcessResult {
        try harness.agentTool(["vault", "migrate", "--to", "tpm2", "--config", config, "--state-dir", harness.stateDir,
                               "--backup", harness.folder + "/before-vault.db"] + extra)
    }

    func testMigrationFromTheFileVaultKeepsTheOwnerAndTheIdentity() throws {
        let tpm = try startTPM()
        let harness = AgentHarness()
        let owner = try fileVaultCar(harness)
        let publishedBefore = try Files.read(harness.stateDir + "/car-identity.pub")
        let config = try tpm2Config(harness, tpm)

        // The vault configured before migrating: the TPM's new storage key does not open the
        // store, and the start says to migrate (nothing re-sealed, storage.key kept).
        let early = try refusedStartWritesNothing(stateDir: harness.stateDir, config: config)
        XCTAssertEqual(early.status, 1, early.stderr)
        XCTAssertTrue(early.stderr.contains("does not open the store") && early.stderr.contains("carkey-agent vault migrate"), early.stderr)
        XCTAssertTrue(exists(harness.stateDir + "/storage.key"))
        XCTAssertFalse(exists(harness.stateDir + "/tpm2-storage.pub"), "the vault minted no key for a store it cannot open")

        // Refused while the agent runs.
        try harness.start()
        let running = try migrate(harness, config: config)
        XCTAssertEqual(running.status, 1, running.stdout + running.stderr)
        XCTAssertTrue(running.stderr.contains("an agent is running on \(harness.stateDir)")
                      && running.stderr.contains("stop it first (systemctl stop carkey-agent), then migrate"), running.stderr)
        XCTAssertFalse(running.stderr.contains("restore"), "migrate is what runs next, not restore: \(running.stderr)")
        XCTAssertTrue(exists(harness.stateDir + "/storage.key"), "nothing changed while the agent runs")
        XCTAssertEqual(harness.stop(), 0)

        // The way back is refused clearly.
        let back = try harness.agentTool(["vault", "migrate", "--to", "file", "--config", config, "--state-dir", harness.stateDir])
        XCTAssertEqual(back.status, 2, back.stderr)
        XCTAssertTrue(back.stderr.contains("--to") && back.stderr.contains("cannot leave the device"), back.stderr)

        let migrated = try migrate(harness, config: config)
        XCTAssertEqual(migrated.status, 0, migrated.stdout + migrated.stderr)
        XCTAssertTrue(migrated.stdout.contains("re-sealed in one transaction") && migrated.stdout.contains("identity is unchanged"), migrated.stdout)
        XCTAssertFalse(exists(harness.stateDir + "/storage.key"), "the old key file is removed after success")
        XCTAssertTrue(exists(harness.folder + "/before-vault.db"), "a backup was taken first")
        XCTAssertEqual(try identityRowCount(harness.stateDir), 1, "the identity record stays, sealed by the TPM's storage key")
        XCTAssertEqual(try Files.read(harness.stateDir + "/car-identity.pub"), publishedBefore)

        // The file vault no longer opens it: the start names the vault, and writes nothing.
        let fileConfig = try writeConfig(harness, #"{"provider": "file"}"#, name: "file.json")
        let fileStart = try refusedStartWritesNothing(stateDir: harness.stateDir, config: fileConfig, sidecars: false)
        XCTAssertEqual(fileStart.status, 1, fileStart.stderr)
        XCTAssertTrue(fileStart.stderr.contains("sealed by a tpm2 key vault"), fileStart.stderr)

        let started = try harness.start(clockSync: "no", ["--config", config])
        XCTAssertTrue(started.stderr.contains("key vault: tpm2"), started.stderr)
        XCTAssertEqual(try unlock(harness, owner.path).firstLine, "ok", "the owner unlocks without enrolling again")
        XCTAssertEqual(harness.stop(), 0)

        // A backup of the migrated car: its identity row opens with the TPM's storage key.
        let backup = try harness.agentTool(["backup", "--state-dir", harness.stateDir, "--config", config, "--out", harness.folder + "/migrated.db"])
        XCTAssertEqual(backup.status, 0, backup.stderr)
        XCTAssertTrue(backup.stdout.contains("car identity \(KeyID(publicKey: try P256PublicKey(pemRepresentation: String(decoding: publishedBefore, as: UTF8.self))))"), backup.stdout)

        // Another car on the same TPM, its identity in the TPM: its backup is not this car's,
        // and the refusal says so in the documented words (not "holds no car identity").
        let other = AgentHarness()
        let otherConfig = try tpm2Config(other, tpm)
        try other.start(clockSync: "no", ["--config", otherConfig])
        XCTAssertEqual(other.stop(), 0)
        let otherBackup = other.folder + "/other-car.db"
        XCTAssertEqual(try other.agentTool(["backup", "--state-dir", other.stateDir, "--config", otherConfig, "--out", otherBackup]).status, 0)
        let foreign = try harness.agentTool(["restore", "--state-dir", harness.stateDir, "--config", config, "--from", otherBackup])
        XCTAssertEqual(foreign.status, 1, foreign.stdout)
        XCTAssertTrue(foreign.stderr.contains("not sealed by this tpm2 key vault's storage key"), foreign.stderr)
        XCTAssertFalse(foreign.stderr.contains("holds no car identity"), foreign.stderr)

        // Run again: already done, nothing to re-seal.
        let again = try migrate(harness, config: config)
        XCTAssertEqual(again.status, 0, again.stdout + again.stderr)
        XCTAssertTrue(again.stdout.contains("already sealed"), again.stdout)
    }

    func testMigrationWithANewIdentityRefusesTheOldPinUntilThePhoneRepins() throws {
        let tpm = try startTPM()
        let harness = AgentHarness()
        let owner = try fileVaultCar(harness)
        let publishedBefore = try Files.read(harness.stateDir + "/car-identity.pub")
        let config = try tpm2Config(harness, tpm)

        let migrated = try migrate(harness, config: config, ["--new-identity"])
        XCTAssertEqual(migrated.status, 0, migrated.stdout + migrated.stderr)
        XCTAssertTrue(migrated.stdout.contains("must pin it again") && migrated.stdout.contains("-----BEGIN PUBLIC KEY-----"), migrated.stdout)
        XCTAssertEqual(try identityRowCount(harness.stateDir), 0, "the identity record is removed")
        XCTAssertNotEqual(try Files.read(harness.stateDir + "/car-identity.pub"), publishedBefore, "the new key is published")
        XCTAssertFalse(exists(harness.stateDir + "/storage.key"))

        try harness.start(clockSync: "no", ["--config", config])
        let stale = try unlock(harness, owner.path)
        XCTAssertNotEqual(stale.firstLine, "ok", "a phone pinned to the old identity is refused: \(stale.stdout) \(stale.stderr)")
        let repinned = try unlock(harness, owner.path, pinned: true)
        XCTAssertEqual(repinned.firstLine, "ok", "after pinning the new key the owner's key still works: \(repinned.stdout) \(repinned.stderr)")
        // The in-person way (operations.md section 13): the owner pairs the same phone key
        // again; the car keeps the key (nothing changes in the keychain) and the phone's saved
        // pin is replaced by the new identity, proven by the pairing code.
        let again = try harness.enroll(owner.path, code: try harness.pair())
        XCTAssertEqual(again.status, 0, again.stdout + again.stderr)
        XCTAssertTrue(again.stdout.hasPrefix("enrolled\n"), again.stdout)
        XCTAssertEqual(try unlock(harness, owner.path).firstLine, "ok", "the saved pin is the new identity now")
        XCTAssertEqual(harness.stop(), 0)
        print("vault: old pin after --new-identity -> \(stale.firstLine) / \(stale.stderr.trimmingCharacters(in: .whitespacesAndNewlines))")
    }
}

// `carkey-agent vault migrate` (issue 18): a car on the storage.key file moved onto a TPM 2.0
// or a PKCS#11 token, with the agent stopped. Order, so a failure at any step leaves a car
// that starts as before:
//   1. a checked backup of the store (StoreBackup, sealed with the old key: the way back,
//      together with a kept copy of storage.key);
//   2. the vault's storage key (made and sealed in the device on first use) and, with
//      --new-identity, the device identity;
//   3. every sealed record re-sealed under the vault's key in ONE transaction (a record that
//      does not open stops it, nothing changed), with a storage event;
//   4. the store reopened with the vault alone and the identity loaded (the proof);
//   5. only then storage.key removed (and the directory synced).
// A stop between 3 and 5 leaves storage.key beside a store it no longer opens: running the
// command again finds the store already sealed by the vault and finishes step 5.
// The way back (--to file) is refused: a device identity cannot leave the device, and a
// storage key written to a file is what the vault exists to prevent.
#if canImport(Glibc)
import Glibc
#endif
import Drivers
import Protocol

enum VaultMigration {
    struct Outcome {
        var resealed = 0
        var alreadySealed = false
        var backup: String?
        var removedKeyFile: String?
        /// Set with --new-identity: the car's new public key (phones must pin it again).
        var newIdentity: P256PublicKey?
        var vaultLine = ""
    }

    struct Refused: Error, CustomStringConvertible {
        let description: String
        init(_ description: String) { self.description = description }
    }

    static func run(settings: VaultSettings, stateDirectory: String, backup: String, newIdentity: Bool) throws -> Outcome {
        let layout = StateDirectory(path: stateDirectory)
        guard access(layout.databasePath, F_OK) == 0 else {
            throw Refused("no car store in \(stateDirectory) (\(StateDirectory.databaseFileName) not found): a new car needs no migration, start the agent with the vault configured")
        }
        do { try RunningAgent.refuse(stateDirectory) } catch StoreBackupError.agentRunning(_, let socket) {
            throw Refused("an agent is running on \(stateDirectory) (\(socket) answers): stop it first (systemctl stop carkey-agent), then migrate")
        }
        let keyFile = access(layout.storageKeyPath, F_OK) == 0
        guard keyFile || access(layout.storageKeyPath + ".provisional", F_OK) != 0 else {
            throw Refused("\(layout.storageKeyPath).provisional: this car's first start did not finish; start the agent once with the file vault, then migrate")
        }
        var outcome = Outcome()
        let vault: any CarKeyVault
        do {
            guard let opened = try AgentVault.open(settings, stateDirectory: stateDirectory) else { throw Refused("internal: no device vault") }
            vault = opened
        } catch let error as AgentVault.OpenFailure {
            throw Refused(error.description)
        }
        outcome.vaultLine = AgentVault.startupLine(vault, stateDirectory: stateDirectory)

        // Already sealed by this vault (a migration stopped before step 5, or run twice).
        if !keyFile || (try? CarStore.open(stateDirectory: stateDirectory, keyProvider: vault).checkpointAndClose()) != nil {
            guard !newIdentity else {
                throw Refused("\(stateDirectory) is already sealed by the \(vault.kind) vault; --new-identity applies only while migrating")
            }
            try proveOpens(stateDirectory, vault: vault)
            outcome.alreadySealed = true
            if keyFile { outcome.removedKeyFile = try removeKeyFile(layout) }
            return outcome
        }

        // 1. The way back.
        do { _ = try StoreBackup.write(stateDirectory: stateDirectory, to: backup) } catch {
            throw Refused("nothing migrated: backup not written to \(backup) (choose another place with --backup FILE): \(error)")
        }
        outcome.backup = backup
        // 2. The vault's keys.
        var key: Bytes
        do { key = try vault.storageKey() } catch { throw Refused("nothing migrated: key vault: \(error)") }
        defer { ConstantTime.wipe(&key) }
        if newIdentity {
            do {
                guard let device = try vault.deviceIdentity(create: true) else { throw Refused("key vault: no identity created") }
                outcome.newIdentity = device.publicKey
            } catch let error as SecureKeyError {
                throw Refused("nothing migrated: key vault: \(error)")
            }
        }
        // 3. One transaction.
        do {
            let store = try CarStore.open(stateDirectory: stateDirectory)
            let summary = try store.resealAll(under: key, removeIdentity: newIdentity, vaultKind: vault.kind)
            _ = try store.checkpointAndClose()
            outcome.resealed = summary.resealed
        } catch {
            throw Refused("nothing migrated: \(error)")
        }
        // 4. The proof, 5. the old key gone.
        try proveOpens(stateDirectory, vault: vault)
        if let identity = outcome.newIdentity {
            // Phones pin this file (`carkey phone --car-key @DIR/car-identity.pub`).
            try Files.writeAtomically(Bytes(try identity.pemRepresentation().utf8), to: stateDirectory + "/" + StateFiles.identityFileName, mode: 0o644)
        }
        outcome.removedKeyFile = try removeKeyFile(layout)
        return outcome
    }

    /// Opens the store with the vault alone and loads the identity: what the agent will do.
    private static func proveOpens(_ stateDirectory: String, vault: any CarKeyVault) throws {
        do {
            let store = try CarStore.open(stateDirectory: stateDirectory, keyProvider: vault)
            _ = try store.loadOrCreateIdentity(vault: vault)
            _ = try store.checkpointAndClose()
        } catch {
            let keyPath = StateDirectory(path: stateDirectory).storageKeyPath
            throw Refused("the store does not open with the \(vault.kind) vault (\(AgentVault.describe(error)))"
                          + (access(keyPath, F_OK) == 0 ? "; \(keyPath) is kept" : ""))
        }
    }

    private static func removeKeyFile(_ layout: StateDirectory) throws -> String {
        guard unlink(layout.storageKeyPath) == 0 || errno == ENOENT else {
            throw Refused("migrated, but \(layout.storageKeyPath) could not be removed (errno \(errno)): remove it by hand, it seals nothing any more")
        }
        // The removal must survive a power cut like the records it no longer seals.
        if let directory = try? FileDescriptor.open(layout.path, O_RDONLY | O_DIRECTORY) {
            try? directory.sync()
            directory.close()
        }
        return layout.storageKeyPath
    }
}

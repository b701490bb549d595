// `carkey-agent vault migrate --to tpm2|pkcs11 [--new-identity] --config PATH`: moves a car's
// storage key (and, when asked, its identity) from the storage.key file into the key vault the
// config names, with the agent stopped (issue 18; VaultMigration has the steps and why).
import CommandLineKit
import Drivers

extension Command {
    static let vault = Command(
        name: "vault",
        summary: "Key vault operations (move the car's keys into a TPM 2.0 or a PKCS#11 token)",
        subcommands: [.vaultMigrate]
    )

    static let vaultMigrate = Command(
        name: "migrate",
        summary: "Re-seal the store under the configured vault's storage key and remove storage.key (agent stopped)",
        discussion: """
            Stop the agent first: migrate refuses while an agent answers on DIR/control.sock or
            DIR/ble.sock. Put the "vault" object in the config first ("provider" must be what
            --to names, with its tcti/pcrs or module/token/pinFile): the agent is started with
            that config afterwards. Then: a checked backup of the store is written (--backup,
            default DIR.before-vault.db beside the state directory; it is sealed with the old
            storage.key, so it restores only together with a kept copy of that key), every
            sealed record is re-sealed under the vault's storage key in one transaction, the
            store is opened with the vault to prove it, and only then DIR/storage.key is
            removed. Keys, shares, revocations and events stay.

            The car identity stays the same (its record is now sealed by the device's storage
            key, so a copied disk opens nowhere else) unless --new-identity: then a new identity
            is created inside the device, the old record is removed, the new public key is
            printed and written to DIR/car-identity.pub, and every phone must pin it again
            (docs/operations.md). Migrating back (--to file) is refused: a device identity
            cannot leave the device. Run it as the agent's user.
            """,
        options: [
            .value("config", placeholder: "PATH", help: "The agent's config file, naming the vault (default \(AgentConfig.defaultPath))"),
            .value("to", placeholder: "KIND", help: "tpm2 or pkcs11: the vault the config names"),
            .flag("new-identity", help: "Create the car identity inside the device (phones must pin it again)"),
            .value("state-dir", placeholder: "DIR", help: "State directory (default: the config's stateDirectory)"),
            .value("backup", placeholder: "FILE", help: "Where to write the backup taken first (default DIR.before-vault.db)"),
        ],
        exitStatuses: [
            ExitStatus(0, "migrated (or already sealed by that vault)"),
            ExitStatus(1, "refused or failed (an agent runs, the vault cannot be opened): the store as it was, the reason on stderr"),
        ],
        action: { invocation in
            let arguments = invocation.arguments
            let target = try arguments.require("to")
            guard target == "tpm2" || target == "pkcs11" else {
                throw UsageError.invalidValue(target, for: "--to", expected: target == "file"
                    ? "tpm2 or pkcs11 (back to the file vault is not supported: a device identity cannot leave the device; restore the backup taken before the migration, with its storage.key, instead)"
                    : "tpm2 or pkcs11")
            }
            let configPath = arguments.value("config") ?? AgentConfig.defaultPath
            let config: AgentConfig
            do { config = try AgentConfig.load(path: configPath) } catch { throw UsageError("config \(configPath): \(error)") }
            guard config.vault.kind == target else {
                throw UsageError("config \(configPath): vault.provider is \(config.vault.kind), not \(target): "
                                 + "put the \"vault\" object for \(target) in the config first (the agent starts with it after the migration)")
            }
            let directory: String
            if arguments.value("state-dir") != nil {
                directory = try StateDirectoryArgument.path(arguments)
            } else if let configured = config.stateDirectory {
                directory = configured
            } else {
                throw UsageError(ConfigError.missing(key: "stateDirectory", flag: "--state-dir", why: "").description)
            }
            let backup = arguments.value("backup") ?? directory + ".before-vault.db"
            let outcome: VaultMigration.Outcome
            do {
                outcome = try VaultMigration.run(settings: config.vault, stateDirectory: directory, backup: backup,
                                                 newIdentity: arguments.flag("new-identity"))
            } catch {
                throw AgentToolFailure("\(error)")
            }
            print(outcome.vaultLine)
            if outcome.alreadySealed {
                print("\(directory) is already sealed by the \(target) vault: nothing to re-seal")
            } else {
                print("migrated \(directory) to the \(target) vault: \(outcome.resealed) sealed record(s) re-sealed in one transaction")
            }
            if let backup = outcome.backup {
                print("backup taken first: \(backup) (sealed with the old storage key: it restores only with a kept copy of storage.key; "
                      + "destroy both once the car runs on the vault)")
            }
            if let removed = outcome.removedKeyFile { print("removed \(removed)") }
            if let identity = outcome.newIdentity {
                print("new car identity, created in the device; every phone must pin it again (docs/operations.md):")
                print(try identity.pemRepresentation(), terminator: "")
                print("written to \(directory)/\(StateFiles.identityFileName)")
            } else {
                print("the car identity is unchanged (its record is now sealed by the \(target) vault's storage key)")
            }
            print("next: start the agent with \(configPath)")
            return 0
        }
    )
}

// The store tools (keys, events, outbox, backup, restore) on a state directory sealed by a key
// vault (issue 18): its storage key is in the TPM or the token, so the tool opens the vault the
// agent's config names, read-only in effect: it never makes a storage key or an identity (a
// directory without the vault's files is not opened through the vault at all).
import CommandLineKit
import Drivers

enum ToolVault {
    static let option = Option.value(
        "config", placeholder: "PATH",
        help: "The agent's config, for a store sealed by a tpm2 or pkcs11 key vault (default \(AgentConfig.defaultPath) when the store needs it)")

    /// The vault sealing `directory`, opened as the config names it; nil for DIR/storage.key.
    /// A config given with --config that names a vault the directory holds no files of is an
    /// error (restoring a vault car onto an emptied directory: the vault files come first).
    static func open(for directory: String, _ arguments: ParsedArguments) throws -> (any CarKeyVault)? {
        let explicit = arguments.value("config")
        guard let sealedBy = VaultFiles.deviceSealing(directory) else {
            guard let explicit, let config = try? AgentConfig.load(path: explicit), config.vault.kind != "file" else { return nil }
            throw AgentToolFailure("\(explicit) names a \(config.vault.kind) key vault, but \(directory) holds none of its files "
                                   + "(\(VaultFiles.names(config.vault.kind))): put back the vault files kept with the backup, "
                                   + "on the board they came from, then run the tool again")
        }
        let path = explicit ?? AgentConfig.defaultPath
        let config: AgentConfig
        do {
            config = try AgentConfig.load(path: path)
        } catch {
            throw AgentToolFailure("\(directory) is sealed by a \(sealedBy) key vault, opened as the agent's config names it; "
                                   + "config \(path): \(error) (name the agent's config with --config PATH)")
        }
        guard config.vault.kind == sealedBy else {
            throw AgentToolFailure("\(directory) is sealed by a \(sealedBy) key vault, but config \(path) names vault.provider "
                                   + "\(config.vault.kind): name the agent's config with --config PATH")
        }
        do {
            return try AgentVault.open(config.vault, stateDirectory: directory)
        } catch {
            throw AgentToolFailure("\(error)")
        }
    }
}

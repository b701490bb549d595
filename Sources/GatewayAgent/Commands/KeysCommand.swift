// `carkey-agent keys --state-dir DIR [--json]`: the enrolled keys, read from the store (also
// while the agent runs). IDs, roles, permissions, validity, last use: never key material.
import CommandLineKit
import Drivers

extension Command {
    static let keys = Command(
        name: "keys",
        summary: "List the car's keys from the store (never secrets)",
        discussion: """
            Reads DIR/carkey.db directly (run as the agent's user; works while the agent runs).
            One row per key: key ID, role, permissions (the level name for shares), validity,
            last use and use count, and whether it is revoked; then the kept revocations. Last
            use is written by the agent in batches, at most 30 s late. Rows that fail
            authentication are listed as NOT USED and logged as tamper events. A store sealed by
            a tpm2 or pkcs11 key vault is opened through the vault the agent's config names
            (--config; with a TPM, use the kernel's resource manager, device:/dev/tpmrm0, so the
            tool and the running agent can both reach it).
            """,
        options: [
            StateDirectoryArgument.option,
            ToolVault.option,
            .flag("json", help: "Print one JSON object: keys, revocations, notUsed"),
        ],
        exitStatuses: [
            ExitStatus(0, "printed"),
            ExitStatus(1, "no store in DIR, or it cannot be opened: the reason on stderr"),
        ],
        action: { invocation in
            let directory = try StateDirectoryArgument.path(invocation.arguments)
            let store = try StateDirectoryArgument.openStore(directory, invocation.arguments)
            let loaded = try KeychainLoader.load(from: store)
            if invocation.arguments.flag("json") {
                print(KeyListingFormat.json(loaded).serialized)
            } else {
                KeyListingFormat.text(loaded).forEach { print($0) }
            }
            return 0
        }
    )
}

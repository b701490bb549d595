// `carkey-agent backup --state-dir DIR --out FILE`: a complete, checked copy of the car's
// store, safe to take while the agent runs (SQLite's online backup API: one consistent
// snapshot read through the WAL). The storage key is NOT in it: see the discussion.
import CommandLineKit
import Drivers

extension Command {
    static let backup = Command(
        name: "backup",
        summary: "Write a consistent, checked backup of the car's store (also while the agent runs)",
        discussion: """
            Copies DIR/carkey.db, including what is still in its write-ahead log, as one
            snapshot into FILE (mode 0600, written to a temporary file, fsynced, then renamed:
            FILE is never half written). The copy is checked before it is kept: SQLite's
            integrity check, an OpenCarKey store of a known schema, and a car identity that
            opens with DIR/storage.key. Run it as the agent's user, while the agent runs or not.
            The records in the backup are sealed with DIR/storage.key, which is not in it:
            without that key the backup cannot be restored. Keep a copy of storage.key too,
            secret and apart from the backups (with both, anyone holds the car's keys).
            Restore with 'carkey-agent restore --state-dir DIR --from FILE'.

            A car on a tpm2 or pkcs11 key vault: give the agent's config with --config (default
            /etc/opencarkey/agent.json). There is no storage.key to keep: the storage key never
            leaves the device. Keep a copy of the vault files in DIR (tpm2-* or
            pkcs11-storage.key) with the backup instead; they open only in this board's device.
            """,
        options: [
            StateDirectoryArgument.option,
            ToolVault.option,
            .value("out", placeholder: "FILE", help: "Where to write the backup (outside DIR)"),
        ],
        exitStatuses: [
            ExitStatus(0, "written and checked"),
            ExitStatus(1, "nothing written: the reason on stderr"),
        ],
        action: { invocation in
            let directory = try StateDirectoryArgument.path(invocation.arguments)
            let output = try invocation.arguments.require("out")
            let vault = try ToolVault.open(for: directory, invocation.arguments)
            let summary: StoreCopySummary
            do {
                summary = try StoreBackup.write(stateDirectory: directory, to: output, vault: vault)
            } catch {
                throw AgentToolFailure("backup not written: \(error)")
            }
            print("backup of \(directory) written to \(output): \(summary)")
            if let vault {
                // The blobs open only in this board's device: not secret, but without them the
                // backup cannot be opened even on this board once the SD card is lost.
                print("note: the records are sealed with the \(vault.kind) key vault's storage key, which never leaves the device; "
                      + "keep a copy of \(VaultFiles.names(vault.kind)) from \(directory) with the backup (they open only in this board's "
                      + "device, so they need not be secret): the backup restores only on this board, with those files")
            } else {
                print("note: the records are sealed with \(StateDirectory(path: directory).storageKeyPath), which is not in the backup; "
                      + "keep a copy of it, secret and apart from the backup, or the backup cannot be restored")
            }
            return 0
        }
    )
}

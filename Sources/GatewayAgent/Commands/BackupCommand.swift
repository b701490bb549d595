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
            """,
        options: [
            StateDirectoryArgument.option,
            .value("out", placeholder: "FILE", help: "Where to write the backup (outside DIR)"),
        ],
        action: { invocation in
            let directory = try StateDirectoryArgument.path(invocation.arguments)
            let output = try invocation.arguments.require("out")
            let summary: StoreCopySummary
            do {
                summary = try StoreBackup.write(stateDirectory: directory, to: output)
            } catch {
                throw AgentToolFailure("backup not written: \(error)")
            }
            print("backup of \(directory) written to \(output): \(summary)")
            print("note: the records are sealed with \(StateDirectory(path: directory).storageKeyPath), which is not in the backup; "
                  + "keep a copy of it, secret and apart from the backup, or the backup cannot be restored")
            return 0
        }
    )
}

// `carkey-agent restore --state-dir DIR --from FILE`: puts a backup in place of the car's
// store, with the agent stopped. The file is checked first (an OpenCarKey store of a known
// schema, intact, with a car identity that opens with DIR/storage.key); the current store is
// kept as DIR/carkey.db.before-restore; the switch is one rename.
#if canImport(Glibc)
import Glibc
#endif
import CommandLineKit
import Drivers

extension Command {
    static let restore = Command(
        name: "restore",
        summary: "Replace the car's store with a backup (agent stopped; the current store is kept aside)",
        discussion: """
            Stop the agent first: restore refuses while an agent answers on DIR/control.sock
            or DIR/ble.sock. FILE must be a backup written by 'carkey-agent backup' (or
            carkey.db of a cleanly stopped agent) of THIS car: its records are sealed with the
            storage key, so DIR/storage.key must be the key of the car the backup was taken
            from. To restore onto a new board or an emptied directory, put the kept storage.key
            in place first (DIR mode 0700, the key 0600, both owned by the agent's user), then
            restore. The current store is kept as DIR/carkey.db.before-restore (.1, .2, ... when
            taken). Then start the agent and re-apply revocations made after the backup was
            taken (docs/operations.md section 3). Run it as the agent's user.

            A car on a tpm2 or pkcs11 key vault (--config names it): the backup opens only with
            the same device and the vault files that were in DIR when it was taken; put those
            back first, on the board the backup came from. A backup cannot move a car to
            another board's TPM: that board is a new car.
            """,
        options: [
            StateDirectoryArgument.option,
            ToolVault.option,
            .value("from", placeholder: "FILE", help: "The backup to restore"),
        ],
        exitStatuses: [
            ExitStatus(0, "restored; the old store kept aside"),
            ExitStatus(1, "nothing restored (an agent runs, a backup of another car, a damaged file): the reason on stderr"),
        ],
        action: { invocation in
            let directory = try StateDirectoryArgument.path(invocation.arguments)
            let backup = try invocation.arguments.require("from")
            let outcome: StoreRestore.Outcome
            do {
                try RunningAgent.refuse(directory)
                let vault = try ToolVault.open(for: directory, invocation.arguments)
                outcome = try StoreRestore.restore(stateDirectory: directory, from: backup, vault: vault)
            } catch {
                throw AgentToolFailure("nothing restored: \(error)")
            }
            print("restored \(backup) into \(directory): \(outcome.summary)")
            if let previous = outcome.previousStore { print("the previous store is kept as \(previous)") }
            print("next: start the agent, check 'carkey-agent keys', and re-apply revocations made after the backup was taken")
            return 0
        }
    )
}

/// Whether an agent serves a state directory: its sockets answer (the way the agent itself
/// tells a live socket from a stale one when it starts).
enum RunningAgent {
    static func refuse(_ directory: String) throws {
        for name in [ControlProtocol.socketFileName, RunOptions.socketFileName] {
            let path = directory + "/" + name
            guard UnixSocket.inode(of: path) != nil else { continue }
            do {
                let connection = try UnixSocket.connect(path: path)
                connection.close()
                throw StoreBackupError.agentRunning(directory: directory, socket: path)
            } catch let error as Errno where error.rawValue == ECONNREFUSED || error.rawValue == ENOENT {
                continue  // a stale socket file: nothing listens
            } catch let error as Errno {
                throw AgentToolFailure("cannot tell whether an agent runs on \(directory): \(error)")
            }
        }
    }
}

// `carkey-agent outbox --state-dir DIR`: how much waits for the cloud, how old, and why.
import CommandLineKit
import Drivers
import Protocol
#if canImport(Glibc)
import Glibc
#endif

extension Command {
    static let outbox = Command(
        name: "outbox",
        summary: "Show the cloud outbox: depth, oldest age, refusals, last error",
        discussion: "Reads the store directly, so it works while the agent runs.",
        options: [
            StateDirectoryArgument.option,
            ToolVault.option,
            .flag("json", help: "Print one JSON object: depth, bytes, oldestAgeMillis, refused, lastError"),
        ],
        exitStatuses: [
            ExitStatus(0, "printed"),
            ExitStatus(1, "no store in DIR, or it cannot be opened: the reason on stderr"),
        ],
        action: { invocation in
            let directory = try StateDirectoryArgument.path(invocation.arguments)
            // An inspection must not create a store where there was none.
            guard access(StateDirectory(path: directory).databasePath, F_OK) == 0 else {
                throw CommandFailure("no agent state in \(directory) (no carkey.db)")
            }
            let store = try CarStore.open(stateDirectory: directory, keyProvider: ToolVault.open(for: directory, invocation.arguments))
            let status = try SQLiteOutbox(store: store).status()
            if invocation.arguments.flag("json") {
                print(JSONValue.object([
                    ("depth", .integer(Int64(status.depth))),
                    ("bytes", .integer(status.bytes)),
                    ("oldestAgeMillis", status.oldestAgeMillis.map { .integer($0) } ?? .null),
                    ("refused", .integer(Int64(status.refused))),
                    ("lastError", status.lastError.map { .string($0) } ?? .null),
                ]).serialized)
            } else {
                print("depth: \(status.depth) message(s), \(status.bytes) payload bytes")
                print("oldest: " + (status.oldestAgeMillis.map { "\(Double($0) / 1000) s ago" } ?? "-"))
                print("held by a broker refusal: \(status.refused)")
                print("last error: \(status.lastError ?? "-")")
            }
            return 0
        }
    )
}

// `carkey-agent events --state-dir DIR [--since SEQ] [--limit N] [--json]`: the audit log,
// oldest first, read from the store (also while the agent runs).
import CommandLineKit
import Drivers

extension Command {
    static let events = Command(
        name: "events",
        summary: "Print the car's event log (audit) from the store",
        discussion: """
            One row per event: sequence number (per car, never reused, continues across
            restarts), time and whether the car clock was trusted then, kind (access-decision,
            enrollment, share, revocation, tamper, storage, ...), actor key ID, action, result,
            fault, and the detail. --since SEQ prints events after SEQ. A note on stderr says
            when --limit cut the list short.
            """,
        options: [
            StateDirectoryArgument.option,
            ToolVault.option,
            .value("since", placeholder: "SEQ", help: "Only events with a sequence number above SEQ (default 0)"),
            .value("limit", placeholder: "N", help: "At most N events (default 1000)"),
            .flag("json", help: "Print one JSON object: {\"events\":[...]}"),
        ],
        exitStatuses: [
            ExitStatus(0, "printed"),
            ExitStatus(1, "no store in DIR, or it cannot be opened: the reason on stderr"),
        ],
        action: { invocation in
            let arguments = invocation.arguments
            let directory = try StateDirectoryArgument.path(arguments)
            let since = try arguments.integer("since") ?? 0
            guard since >= 0 else { throw UsageError.invalidValue(String(since), for: "--since", expected: "a sequence number, 0 or more") }
            let limit = try arguments.integer("limit") ?? 1000
            guard (1...100_000).contains(limit) else { throw UsageError.invalidValue(String(limit), for: "--limit", expected: "1 to 100000") }
            let store = try StateDirectoryArgument.openStore(directory, arguments)
            let events = try store.events(since: Int64(since), limit: limit)
            if arguments.flag("json") {
                let json = EventListingFormat.json(events) { detail in
                    (try? store.database.read { try $0.scalar("SELECT json_valid(?1)", [.text(detail)]) }) == .integer(1)
                }
                print(json.serialized)
            } else {
                EventListingFormat.text(events).forEach { print($0) }
            }
            if events.count == limit, let last = events.last, try store.lastEventSequence() > last.seq {
                writeStderr("carkey-agent events: more events follow; continue with --since \(last.seq)\n")
            }
            return 0
        }
    )
}

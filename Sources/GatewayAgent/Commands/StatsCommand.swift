// `carkey-agent stats --state-dir DIR [--json]`: the running agent's counters (syncs, uptime,
// events appended, outbox depth, commits) from DIR/control.sock.
import CommandLineKit
import Drivers

extension Command {
    static let stats = Command(
        name: "stats",
        summary: "Print the running agent's counters: syncs, uptime, events appended, outbox depth",
        discussion: """
            Connects to DIR/control.sock of the agent running with --state-dir DIR (as the
            agent's user or root) and prints one 'name value' line per counter, as the agent
            sends them: uptime-ms, syncs (SQLite syncs of the whole process), wal-syncs,
            sync-time-us, bytes-written, events-appended (since start), outbox-depth, commits
            and events-committed (the agent's group commit), sync-delay-us (a benchmark hook,
            0 on a real car), cloud-connected (1 or 0; none without --mqtt). A value the agent cannot know reads 'none' (null with --json).
            """,
        options: [
            StateDirectoryArgument.option,
            .flag("json", help: "Print one JSON object, names in camelCase (uptimeMs, walSyncs, ...)"),
        ],
        exitStatuses: [
            ExitStatus(0, "printed"),
            ExitStatus(1, "no agent runs for DIR, or it did not send its counters: the reason on stderr"),
        ],
        action: { invocation in
            let directory = try StateDirectoryArgument.path(invocation.arguments)
            let response: ControlResponse
            do {
                response = try ControlClient.request("stats", socketPath: directory + "/" + ControlProtocol.socketFileName)
            } catch let error as ControlClientError {
                throw AgentToolFailure("\(error)")
            }
            if let reason = response.error { throw AgentToolFailure("the agent did not send its counters: \(reason)") }
            guard let fields = StatsLines.parse(response.lines) else {
                throw AgentToolFailure("the agent sent an unexpected answer")
            }
            if invocation.arguments.flag("json") {
                print(JSONValue.object(fields.map { (StatsLines.camelCase($0.name), $0.value.map { .integer($0) } ?? .null) }).serialized)
            } else {
                for field in fields { print("\(field.name) \(field.value.map(String.init) ?? "none")") }
            }
            return 0
        }
    )
}

/// The `stats` answer's lines: "name value", the name lower-case words joined by '-', the
/// value an integer or "none". Any other shape is refused (nothing the agent sends is echoed).
enum StatsLines {
    static func parse(_ lines: [String]) -> [(name: String, value: Int64?)]? {
        var fields: [(name: String, value: Int64?)] = []
        for line in lines {
            let words = line.split(separator: " ", omittingEmptySubsequences: false)
            guard words.count == 2, !words[0].isEmpty, words[0].count <= 40,
                  words[0].allSatisfy({ ($0 >= "a" && $0 <= "z") || ($0 >= "0" && $0 <= "9") || $0 == "-" }) else { return nil }
            if words[1] == "none" {
                fields.append((String(words[0]), nil))
            } else if let value = Int64(words[1]) {
                fields.append((String(words[0]), value))
            } else {
                return nil
            }
        }
        return fields
    }

    /// "events-appended" -> "eventsAppended".
    static func camelCase(_ name: String) -> String {
        let parts = name.split(separator: "-")
        return (parts.first.map(String.init) ?? "") + parts.dropFirst().map { $0.prefix(1).uppercased() + $0.dropFirst() }.joined()
    }
}

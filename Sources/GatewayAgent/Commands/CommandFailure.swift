// A runtime failure of an agent subcommand with a one-line message (exit 1), as opposed to a
// usage error (exit 2). Shared by the inspection commands (outbox, keys, events, pair).
struct CommandFailure: Error, CustomStringConvertible {
    let description: String
    init(_ description: String) { self.description = description }
}

// The agent's log: one line per event on stderr, start-up report included (stdout is the
// console's with --console stdio, and nothing else's). Callers pass IDs, names and results only;
// keys, session keys, signatures, message bytes and codes are never logged.
// Lines below `LogLevel.threshold` (set from the config, changed with `log level`) are dropped.
import CommandLineKit

struct AgentLog: Sendable {
    var prefix = "carkey-agent"

    func debug(_ line: @autoclosure () -> String) { write(.debug, line) }
    func info(_ line: @autoclosure () -> String) { write(.info, line) }
    func warn(_ line: @autoclosure () -> String) { write(.warn, line) }
    func error(_ line: @autoclosure () -> String) { write(.error, line) }
    /// At a level chosen at run time (per-session chatter goes to debug, news to info).
    func line(_ level: LogLevel, _ line: @autoclosure () -> String) { write(level, line) }

    /// Whatever the level threshold: lines the operator asked for by name (`run --conformance`).
    func always(_ line: @autoclosure () -> String) { write(.info, line, always: true) }

    /// A line of the start-up report (already "carkey-agent: ..."): written whatever the log
    /// level, since installers, supervisors and scripts wait for it (the console's path, "control
    /// socket ..." once the agent serves).
    func startup(_ line: String) {
        let priority = JournalStream.isStderr ? JournalStream.prefix(.info) : ""
        writeStderr("\(priority)\(line)\n")
    }

    private func write(_ level: LogLevel, _ line: () -> String, always: Bool = false) {
        guard always || level >= LogLevel.threshold else { return }
        let tag = level == .info ? "" : "\(level.rawValue): "
        // Under systemd the level also becomes the journal entry's priority (journalctl -p).
        let priority = JournalStream.isStderr ? JournalStream.prefix(level) : ""
        writeStderr("\(priority)\(prefix): \(tag)\(line())\n")
    }
}

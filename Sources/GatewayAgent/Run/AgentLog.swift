// The agent's log: one line per event on stderr. Callers pass IDs, names and results only;
// keys, session keys, signatures and message bytes are never logged.
import CommandLineKit

struct AgentLog: Sendable {
    var prefix = "carkey-agent"

    func info(_ line: String) {
        writeStderr("\(prefix): \(line)\n")
    }
}

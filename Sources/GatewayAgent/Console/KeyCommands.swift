// keys, events [N] and pair: who may open the car, what happened, and the pairing window.
// These overlap the control socket's commands (keys work, issue #4); they read the same store
// and call the same hooks, so either front end shows the same thing.
import Drivers
import Protocol

final class KeyCommands: ConsoleCommandGroup {
    static let defaultEvents = 10
    /// Bounded so the answer fits the console's write time at 115200 baud (AgentConsole).
    static let maxEvents = 50

    private let context: ConsoleContext

    init(context: ConsoleContext) {
        self.context = context
    }

    let help: [(usage: String, summary: String)] = [
        ("keys", "enrolled keys (IDs, roles, permissions; never key material)"),
        ("events [N]", "the last N events (default 10, at most 50)"),
        ("pair", "open the pairing window and show its one-time code"),
    ]
    let verbs: Set<String> = ["keys", "events", "pair"]

    func run(_ words: [String]) -> [String] {
        switch words[0] {
        case "keys":
            guard words.count == 1 else { return ConsoleText.usage("keys") }
            guard let lines = context.keyLines?() else { return ["error: the key list is not available in this agent yet"] }
            return lines.isEmpty ? ["no keys enrolled"] : lines
        case "events":
            return events(Array(words.dropFirst()))
        default:
            guard words.count == 1 else { return ConsoleText.usage("pair") }
            return pair()
        }
    }

    private func events(_ arguments: [String]) -> [String] {
        let usage = "events [N] (N from 1 to \(Self.maxEvents))"
        guard arguments.count <= 1 else { return ConsoleText.usage(usage) }
        var count = Self.defaultEvents
        if let text = arguments.first {
            guard let number = Int(text), (1...Self.maxEvents).contains(number) else { return ConsoleText.usage(usage) }
            count = number
        }
        do {
            let last = try context.store.lastEventSequence()
            let rows = try context.store.events(since: max(0, last - Int64(count)), limit: count)
            // The same table as `carkey-agent events` (made printable there).
            return EventListingFormat.text(rows)
        } catch {
            return ["error: event log unreadable: \(error)"]
        }
    }

    private func pair() -> [String] {
        guard let open = context.openPairingWindow else {
            return ["error: pairing is not wired into this agent yet (owner enrollment, issue #4)"]
        }
        switch open() {
        case .success(let code):
            // Shown here only: the console is physical presence, like the pairing button.
            context.log.info("console: pairing window opened (code shown on the console only)")
            return ["pairing window open: enter code \(String(decoding: code.digits, as: UTF8.self)) on the phone (single use, closes after one enrollment or when it expires)"]
        case .failure(let fault):
            return ["error: pairing window not opened: \(fault.name)"]
        }
    }
}

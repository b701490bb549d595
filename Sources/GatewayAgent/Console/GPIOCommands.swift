// gpio: every board line with its role, chip, offset and level; on the simulated chip also how
// often each output went active and (`gpio history`) the recorded level changes: the proof that
// a command moved its line, or that a refused one moved none.
import Drivers

final class GPIOCommands: ConsoleCommandGroup {
    static let historyLimit = 20

    private let context: ConsoleContext

    init(context: ConsoleContext) {
        self.context = context
    }

    let help: [(usage: String, summary: String)] = [
        ("gpio", "line states (outputs and debounced inputs)"),
        ("gpio history", "recorded output changes (simulated chip only)"),
    ]
    let verbs: Set<String> = ["gpio"]

    func run(_ words: [String]) -> [String] {
        switch words.count {
        case 1: return states()
        case 2 where words[1] == "history": return history()
        default: return ConsoleText.usage("gpio [history]")
        }
    }

    private func states() -> [String] {
        let hardware = context.body.hardware
        let debounced = context.body.sampler.states
        var lines = ["board \(hardware.board.name), pulse \(hardware.board.pulseWidthMillis) ms, debounce \(hardware.board.debounceMillis) ms"]
        for line in hardware.lines.lineStates() {
            let level = line.active.map { $0 ? "active" : "inactive" } ?? "unreadable"
            var text = "\(line.role) \(line.isOutput ? "out" : "in"): chip \(line.reference.chip) line \(line.reference.line), \(level)"
            if line.isOutput, let chip = hardware.simulated {
                let activations = chip.activations(role: line.role)
                text += ", went active \(activations) time(s)"
            }
            if !line.isOutput, let role = InputRole(rawValue: line.role), let stable = debounced[role] {
                text += " (debounced \(stable ? "active" : "inactive"))"
            }
            lines.append(text)
        }
        return lines
    }

    private func history() -> [String] {
        guard let chip = context.body.hardware.simulated else {
            return ["error: gpio history needs the simulated chip (--simulate); on hardware see the log"]
        }
        let changes = chip.changes.filter { !$0.initial }
        guard !changes.isEmpty else { return ["no output changes since start"] }
        return changes.suffix(Self.historyLimit).map { change in
            "\(change.atMillis) ms: \(change.role) (chip \(change.chip) line \(change.line)) \(change.active ? "active" : "inactive")"
        }
    }
}

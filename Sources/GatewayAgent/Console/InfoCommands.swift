// version, config and log level: what this agent is and how it is set up.
import Drivers
import Protocol

final class InfoCommands: ConsoleCommandGroup {
    private let context: ConsoleContext

    init(context: ConsoleContext) {
        self.context = context
    }

    let help: [(usage: String, summary: String)] = [
        ("version", "agent version, board and GPIO backend"),
        ("config", "effective settings (secrets masked)"),
        ("log level [debug|info|warn|error]", "show or set the log level until restart"),
    ]
    let verbs: Set<String> = ["version", "config", "log"]

    func run(_ words: [String]) -> [String] {
        switch words[0] {
        case "version":
            guard words.count == 1 else { return ConsoleText.usage("version") }
            let hardware = context.body.hardware
            let backend = hardware.simulated == nil ? "libgpiod \(LibgpiodBackend.libraryVersion)" : "simulated chip"
            return ["carkey-agent \(BuildInfo.version)", "board: \(hardware.board.name) (\(hardware.boardSource)), GPIO \(backend)"]
        case "config":
            guard words.count == 1 else { return ConsoleText.usage("config") }
            return context.config.displayLines(consoleEndpoint: context.endpoint, cloud: context.cloudOptions)
        default:
            return log(Array(words.dropFirst()))
        }
    }

    private func log(_ arguments: [String]) -> [String] {
        guard arguments.first == "level", arguments.count <= 2 else { return ConsoleText.usage("log level [debug|info|warn|error]") }
        guard arguments.count == 2 else { return ["log level: \(LogLevel.threshold.rawValue)"] }
        guard let level = LogLevel(rawValue: arguments[1]) else { return ConsoleText.usage("log level [debug|info|warn|error]") }
        LogLevel.threshold = level
        context.log.warn("log level set to \(level.rawValue) on the console")
        return ["log level: \(level.rawValue)"]
    }
}

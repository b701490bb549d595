// `--state-dir DIR` for the agent's tools (keys, events, pair), and opening the store that is
// already there: a tool never creates a state directory, a database or a storage key.
import CommandLineKit
import Drivers

/// A runtime failure of an agent tool: one line on stderr, exit 1.
struct AgentToolFailure: Error, CustomStringConvertible {
    let description: String
    init(_ description: String) { self.description = description }
}

enum StateDirectoryArgument {
    static let option = Option.value("state-dir", placeholder: "DIR", help: "The agent's state directory")

    static func path(_ arguments: ParsedArguments) throws -> String {
        var directory = try arguments.require("state-dir")
        while directory.count > 1 && directory.hasSuffix("/") { directory.removeLast() }
        guard !directory.isEmpty else { throw UsageError.invalidValue("", for: "--state-dir", expected: "a directory path") }
        return directory
    }

    /// Opens the store in `directory` (works while the agent runs: WAL lets readers in).
    static func openStore(_ directory: String) throws -> CarStore {
        let layout = StateDirectory(path: directory)
        do {
            _ = try Files.mode(of: layout.databasePath)
        } catch {
            throw AgentToolFailure("no car store in \(directory) (\(StateDirectory.databaseFileName) not found)")
        }
        do {
            return try CarStore.open(stateDirectory: directory)
        } catch {
            throw AgentToolFailure("cannot open the store in \(directory): \(error)")
        }
    }
}

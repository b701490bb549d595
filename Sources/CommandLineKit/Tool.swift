#if canImport(Glibc)
import Glibc
#elseif canImport(Darwin)
import Darwin
#endif

/// A command-line program made of subcommands: `<tool> [global options] <command> [options] [args]`.
///
/// - `<tool> --help` / `-h` prints usage to stdout, exit 0; `<tool> --version` prints
///   `<tool> <version>`, exit 0. Both also work per command (`<tool> <command> --help`).
/// - Usage errors exit 2 with one line on stderr:
///   `carkey-agent: unknown option '--foo' (see --help)`.
/// - `resolve(_:)` does no I/O, so dispatch is unit-testable; `main(_:)` does the I/O.
public struct Tool: Sendable {
    public var name: String
    public var version: String
    public var summary: String
    public var discussion: String?
    /// Options accepted before the subcommand name (besides --help and --version).
    public var options: [Option]
    public var commands: [Command]

    public init(name: String, version: String, summary: String, discussion: String? = nil,
                options: [Option] = [], commands: [Command]) {
        self.name = name
        self.version = version
        self.summary = summary
        self.discussion = discussion
        self.options = options
        self.commands = commands
    }

    public enum Resolution: Sendable {
        /// Print this text to stdout and exit 0.
        case help(String)
        /// Print this line to stdout and exit 0.
        case version(String)
        /// Run the command's action.
        case run(Command, Invocation)
        /// Print this one line to stderr and exit 2.
        case usageError(String)
    }

    /// Decides what to do with `arguments` (without the program name).
    public func resolve(_ arguments: [String]) -> Resolution {
        let globalOptions = options + [.flag("version", help: "Print the version and exit")]
        let global: ParsedArguments
        var rest: [String]
        do {
            (global, rest) = try ArgumentParser(options: globalOptions).parsePrefix(arguments)
        } catch {
            return .usageError(usageLine(error, path: []))
        }
        if global.helpRequested { return .help(help()) }
        if global.flag("version") { return .version("\(name) \(version)") }

        var level = commands
        var path: [Command] = []
        while true {
            guard let commandName = rest.first else {
                return .usageError(usageLine(UsageError.missingSubcommand, path: path))
            }
            guard let command = level.first(where: { $0.name == commandName }) else {
                return .usageError(usageLine(UsageError.unknownSubcommand(commandName), path: path))
            }
            path.append(command)
            let tail = rest.dropFirst()
            let parser = ArgumentParser(options: command.options, positionals: command.arguments)
            do {
                if command.subcommands.isEmpty {
                    let parsed = try parser.parse(tail)
                    if parsed.helpRequested { return .help(help(path: path)) }
                    let invocation = Invocation(toolName: name, commandPath: path.map(\.name),
                                                arguments: parsed, globalArguments: global)
                    return .run(command, invocation)
                }
                let (parsed, remaining) = try parser.parsePrefix(tail)
                if parsed.helpRequested { return .help(help(path: path)) }
                rest = remaining
                level = command.subcommands
            } catch {
                return .usageError(usageLine(error, path: path))
            }
        }
    }

    /// Runs the program: resolves, prints, dispatches. Returns the exit status.
    public func main(_ argv: [String] = CommandLine.arguments) -> Int32 {
        switch resolve(Array(argv.dropFirst())) {
        case .help(let text):
            writeStdout(text)
            return 0
        case .version(let line):
            writeStdout(line + "\n")
            return 0
        case .usageError(let line):
            writeStderr(line + "\n")
            return 2
        case .run(let command, let invocation):
            guard let action = command.action else { return 2 }
            do {
                return try action(invocation)
            } catch let error as UsageError {
                let path = commandChain(invocation.commandPath)
                writeStderr(usageLine(error, path: path) + "\n")
                return 2
            } catch {
                writeStderr("\(invocation.displayName): error: \(error)\n")
                return (error as? any ExitStatusError)?.exitStatus ?? 1
            }
        }
    }

    /// `carkey-agent: unknown option '--foo' (see --help)`; for a subcommand the hint
    /// names it: `(see 'carkey crypto --help')`.
    public func usageLine(_ error: any Error, path: [Command]) -> String {
        let message = (error as? UsageError)?.message ?? "\(error)"
        let hint = path.isEmpty
            ? "--help"
            : "'" + ([name] + path.map(\.name)).joined(separator: " ") + " --help'"
        return "\(name): \(message) (see \(hint))"
    }

    /// Usage text for the tool (empty path) or for a (nested) command.
    public func help(path: [Command] = []) -> String {
        var out: [String] = []
        guard let command = path.last else {
            out.append("\(name) \(version): \(summary)")
            out.append("")
            out.append("Usage: \(name) [options] <command> [<args>]")
            if let discussion { out += ["", discussion] }
            out += ["", "Commands:"]
            out += table(commands.map { ($0.name, $0.summary) })
            if commands.isEmpty { out.append("  (none yet)") }
            out += ["", "Options:"]
            out += table(optionRows(options + [.flag("version", help: "Print the version and exit")]))
            out += ["", "Exit status:"]
            out += table([("0", "--help, --version"), ("2", ExitStatus.usage.meaning),
                          ("", "otherwise the command's, listed in '\(name) <command> --help'")])
            out += ["", "Run '\(name) <command> --help' for a command's options."]
            return out.joined(separator: "\n") + "\n"
        }
        let invocation = ([name] + path.map(\.name)).joined(separator: " ")
        if command.subcommands.isEmpty {
            var synopsis = [invocation]
            if !command.options.isEmpty { synopsis.append("[options]") }
            synopsis += command.arguments.map(\.synopsis)
            out.append("Usage: " + synopsis.joined(separator: " "))
        } else {
            out.append("Usage: \(invocation) <command> [<args>]")
        }
        out += ["", command.summary]
        if let discussion = command.discussion { out += ["", discussion] }
        if !command.subcommands.isEmpty {
            out += ["", "Commands:"]
            out += table(command.subcommands.map { ($0.name, $0.summary) })
        }
        if !command.arguments.isEmpty {
            out += ["", "Arguments:"]
            out += table(command.arguments.map { ($0.synopsis, $0.help) })
        }
        out += ["", "Options:"]
        out += table(optionRows(command.options))
        out += ["", "Exit status:"]
        var statuses = command.documentedExitStatuses
        if !command.subcommands.isEmpty {
            statuses.append(ExitStatus(nil, "otherwise the subcommand's, listed in '\(invocation) <command> --help'"))
        }
        out += table(statuses.map { ($0.code.map(String.init) ?? "", $0.meaning) })
        return out.joined(separator: "\n") + "\n"
    }

    private func commandChain(_ names: [String]) -> [Command] {
        var level = commands
        var chain: [Command] = []
        for name in names {
            guard let command = level.first(where: { $0.name == name }) else { break }
            chain.append(command)
            level = command.subcommands
        }
        return chain
    }

    private func optionRows(_ options: [Option]) -> [(String, String)] {
        let builtIn = Option.flag("help", short: "h", help: "Show this help and exit")
        return ([builtIn] + options).map { option in
            var left = option.short.map { "-\($0), " } ?? "    "
            left += option.spelling
            if case .value(let placeholder) = option.kind { left += " <\(placeholder)>" }
            guard !option.aliases.isEmpty else { return (left, option.help) }
            let old = option.aliases.map { "--" + $0 }.joined(separator: ", ")
            return (left, option.help + " (old spelling \(old) still accepted)")
        }
    }

    private func table(_ rows: [(String, String)]) -> [String] {
        let width = rows.map(\.0.count).max() ?? 0
        return rows.map { left, right in
            let padding = String(repeating: " ", count: width - left.count + 2)
            return ("  " + left + padding + right).trimmingTrailingSpaces()
        }
    }
}

private extension String {
    func trimmingTrailingSpaces() -> String {
        var copy = self
        while copy.last == " " { copy.removeLast() }
        return copy
    }
}

/// Writes to stdout (buffered, the same stream as `print`).
public func writeStdout(_ text: String) {
    print(text, terminator: "")
}

/// Writes to stderr, unbuffered.
public func writeStderr(_ text: String) {
    if let standardError { fputs(text, standardError) }
}

// stdio's `stderr` is a mutable C global, which Swift 6 rejects ("not concurrency-safe");
// this is an unbuffered stdio stream on the same descriptor, opened once.
nonisolated(unsafe) private let standardError = {
    let stream = fdopen(STDERR_FILENO, "w")
    if let stream { setvbuf(stream, nil, _IONBF, 0) }
    return stream
}()

/// One subcommand of a tool: either a leaf with an `action`, or a group of
/// nested subcommands (e.g. `carkey crypto verify`).
///
/// Convention: each subcommand lives in its own file as
/// `extension Command { static let demo = Command(...) }` (or an enum with a
/// `static let command`), and the tool's `main.swift` lists it in its table.
public struct Command: Sendable {
    public typealias Action = @Sendable (Invocation) throws -> Int32

    public var name: String
    /// One line, shown in the parent's command list.
    public var summary: String
    /// Optional paragraph shown in the command's own --help.
    public var discussion: String?
    public var options: [Option]
    public var arguments: [Positional]
    public var subcommands: [Command]
    public var action: Action?
    /// What each exit status means, for the "Exit status" section of --help. Status 2 (usage
    /// error) is added when it is not listed: every command has it.
    public var exitStatuses: [ExitStatus]

    /// A leaf command. The action returns the process exit status; throwing a
    /// `UsageError` exits 2 with one line on stderr, an `ExitStatusError` with its own
    /// status, any other error exits 1.
    public init(name: String, summary: String, discussion: String? = nil,
                options: [Option] = [], arguments: [Positional] = [],
                exitStatuses: [ExitStatus] = ExitStatus.standard,
                action: @escaping Action) {
        self.name = name
        self.summary = summary
        self.discussion = discussion
        self.options = options
        self.arguments = arguments
        self.subcommands = []
        self.action = action
        self.exitStatuses = exitStatuses
    }

    /// A group: `tool <name> <subcommand> ...`.
    public init(name: String, summary: String, discussion: String? = nil, subcommands: [Command]) {
        self.name = name
        self.summary = summary
        self.discussion = discussion
        self.options = []
        self.arguments = []
        self.subcommands = subcommands
        self.action = nil
        self.exitStatuses = [ExitStatus(0, "--help")]
    }

    /// The documented statuses in order, status 2 included.
    var documentedExitStatuses: [ExitStatus] {
        if exitStatuses.contains(where: { $0.code == 2 }) { return exitStatuses }
        let before = exitStatuses.filter { ($0.code ?? Int32.max) < 2 }
        return before + [ExitStatus.usage] + exitStatuses.filter { ($0.code ?? Int32.max) > 2 }
    }
}

/// One documented exit status of a command (the "Exit status" section of its --help).
public struct ExitStatus: Sendable, Equatable {
    /// nil for a line that covers the rest ("otherwise the subcommand's").
    public var code: Int32?
    public var meaning: String

    public init(_ code: Int32?, _ meaning: String) {
        self.code = code
        self.meaning = meaning
    }

    /// What `Tool.main` does for every command: usage errors exit 2.
    public static let usage = ExitStatus(2, "usage error: one line on stderr naming the argument, nothing done")
    /// A command that either does its job or fails with one line on stderr.
    public static let standard = [ExitStatus(0, "done"), ExitStatus(1, "failed: the reason in one line on stderr")]
}

/// What a command's action receives.
public struct Invocation: Sendable {
    /// The program name, e.g. `carkey`.
    public var toolName: String
    /// The subcommand names from the tool down to this command, e.g. `["crypto", "verify"]`.
    public var commandPath: [String]
    /// The command's own options and positionals.
    public var arguments: ParsedArguments
    /// Options given before the subcommand name (the tool's global options).
    public var globalArguments: ParsedArguments

    public init(toolName: String, commandPath: [String], arguments: ParsedArguments,
                globalArguments: ParsedArguments = ParsedArguments()) {
        self.toolName = toolName
        self.commandPath = commandPath
        self.arguments = arguments
        self.globalArguments = globalArguments
    }

    /// `carkey crypto verify`.
    public var displayName: String { ([toolName] + commandPath).joined(separator: " ") }
}

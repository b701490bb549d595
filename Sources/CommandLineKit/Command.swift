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

    /// A leaf command. The action returns the process exit status; throwing a
    /// `UsageError` exits 2 with one line on stderr, an `ExitStatusError` with its own
    /// status, any other error exits 1.
    public init(name: String, summary: String, discussion: String? = nil,
                options: [Option] = [], arguments: [Positional] = [],
                action: @escaping Action) {
        self.name = name
        self.summary = summary
        self.discussion = discussion
        self.options = options
        self.arguments = arguments
        self.subcommands = []
        self.action = action
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
    }
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

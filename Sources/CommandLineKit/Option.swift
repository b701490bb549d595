/// A named option: `--name` (a flag) or `--name <value>` / `--name=<value>`,
/// optionally with a one-letter short form `-n` / `-n <value>` / `-n<value>`.
///
/// `--help` and `-h` are built in for every command; do not declare them.
public struct Option: Sendable, Equatable {
    public enum Kind: Sendable, Equatable {
        case flag
        case value(placeholder: String)
    }

    /// Long name without the leading dashes, e.g. `"key"` for `--key`.
    public var name: String
    public var short: Character?
    public var kind: Kind
    public var help: String
    /// Older long spellings that still work (without dashes). They parse exactly like `name`
    /// and are recorded under it, so a renamed option keeps old scripts working for a release
    /// while `--help` shows the new name and mentions the old one.
    public var aliases: [String]

    public init(name: String, short: Character? = nil, kind: Kind, help: String, aliases: [String] = []) {
        self.name = name
        self.short = short
        self.kind = kind
        self.help = help
        self.aliases = aliases
    }

    /// A boolean switch; it may be repeated (`ParsedArguments.count(_:)`).
    public static func flag(_ name: String, short: Character? = nil, aliases: [String] = [], help: String) -> Option {
        Option(name: name, short: short, kind: .flag, help: help, aliases: aliases)
    }

    /// An option that takes a value; it may be repeated (`ParsedArguments.values(_:)`).
    public static func value(_ name: String, short: Character? = nil, aliases: [String] = [], placeholder: String = "value",
                             help: String) -> Option {
        Option(name: name, short: short, kind: .value(placeholder: placeholder), help: help, aliases: aliases)
    }

    /// Whether `--long` (without dashes) is this option's name or one of its old spellings.
    public func answers(to long: Substring) -> Bool {
        name == long || aliases.contains { $0 == long }
    }

    public var takesValue: Bool {
        if case .value = kind { return true }
        return false
    }

    /// `--name`, as the user writes it.
    public var spelling: String { "--" + name }
}

/// A positional argument of a command, e.g. `<file>`.
public struct Positional: Sendable, Equatable {
    public enum Arity: Sendable, Equatable {
        case required
        case optional
        /// Takes all remaining arguments; only valid as the last positional.
        case zeroOrMore
        /// Takes all remaining arguments, at least one; only valid as the last positional.
        case oneOrMore
    }

    public var name: String
    public var arity: Arity
    public var help: String

    public init(_ name: String, arity: Arity = .required, help: String = "") {
        self.name = name
        self.arity = arity
        self.help = help
    }

    var minimum: Int {
        switch arity {
        case .required, .oneOrMore: return 1
        case .optional, .zeroOrMore: return 0
        }
    }

    var maximum: Int {
        switch arity {
        case .required, .optional: return 1
        case .zeroOrMore, .oneOrMore: return Int.max
        }
    }

    var synopsis: String {
        switch arity {
        case .required: return "<\(name)>"
        case .optional: return "[<\(name)>]"
        case .zeroOrMore: return "[<\(name)>...]"
        case .oneOrMore: return "<\(name)>..."
        }
    }
}

/// A mistake on the command line. `Tool.main` turns it into exit status 2 and
/// exactly one line on stderr: `<tool>: <message> (see --help)`.
public struct UsageError: Error, Equatable, Sendable, CustomStringConvertible {
    public var message: String

    public init(_ message: String) { self.message = message }

    public var description: String { message }

    public static func unknownOption(_ spelling: String) -> UsageError {
        UsageError("unknown option '\(spelling)'")
    }
    public static func missingValue(_ spelling: String) -> UsageError {
        UsageError("option '\(spelling)' requires a value")
    }
    public static func unexpectedValue(_ spelling: String) -> UsageError {
        UsageError("option '\(spelling)' does not take a value")
    }
    public static func missingOption(_ spelling: String) -> UsageError {
        UsageError("missing required option '\(spelling)'")
    }
    public static func invalidValue(_ value: String, for spelling: String, expected: String) -> UsageError {
        UsageError("invalid value '\(value)' for '\(spelling)': expected \(expected)")
    }
    public static func missingArgument(_ name: String) -> UsageError {
        UsageError("missing argument <\(name)>")
    }
    public static func unexpectedArgument(_ argument: String) -> UsageError {
        UsageError("unexpected argument '\(argument)'")
    }
    public static func unknownSubcommand(_ name: String) -> UsageError {
        UsageError("unknown subcommand '\(name)'")
    }
    public static let missingSubcommand = UsageError("missing subcommand")
}

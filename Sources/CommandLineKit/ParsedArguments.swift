/// The result of parsing one command's arguments.
public struct ParsedArguments: Sendable, Equatable {
    /// How often each flag was given, by long name.
    public internal(set) var flagCounts: [String: Int] = [:]
    /// Every value given for each value option, in order, by long name.
    public internal(set) var optionValues: [String: [String]] = [:]
    /// Positional arguments, in order.
    public internal(set) var positionals: [String] = []
    /// Positional arguments by their declared name (set when the parser has a positional spec).
    public internal(set) var namedPositionals: [String: [String]] = [:]
    /// `--help` or `-h` was given.
    public internal(set) var helpRequested = false

    public init() {}

    /// `true` if the flag `--name` was given at least once.
    public func flag(_ name: String) -> Bool { count(name) > 0 }

    /// How often the flag `--name` was given (e.g. `-v -v`).
    public func count(_ name: String) -> Int { flagCounts[name] ?? 0 }

    /// The last value given for `--name`, or nil.
    public func value(_ name: String) -> String? { optionValues[name]?.last }

    /// All values given for `--name`, in order.
    public func values(_ name: String) -> [String] { optionValues[name] ?? [] }

    /// The value of `--name`; a usage error if it was not given.
    public func require(_ name: String) throws -> String {
        guard let value = value(name) else { throw UsageError.missingOption("--" + name) }
        return value
    }

    /// The value of `--name` as a decimal integer, nil if absent, a usage error if malformed.
    public func integer(_ name: String) throws -> Int? {
        guard let text = value(name) else { return nil }
        guard let number = Int(text) else {
            throw UsageError.invalidValue(text, for: "--" + name, expected: "an integer")
        }
        return number
    }

    /// The positional argument declared as `name` (the first one, for a repeating positional).
    public func argument(_ name: String) -> String? { namedPositionals[name]?.first }

    /// All positional arguments taken by the positional declared as `name`.
    public func arguments(_ name: String) -> [String] { namedPositionals[name] ?? [] }
}

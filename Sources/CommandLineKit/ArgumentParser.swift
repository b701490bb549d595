/// A small getopt_long-style parser.
///
/// Conventions (shared by every OpenCarKey command-line program):
/// - `--flag`; `--key value` or `--key=value`; `-k value` or `-kvalue` for a
///   declared short form. Options and positionals may be mixed in any order.
/// - A value may begin with a single `-` (`-` for stdin, `-5`). A following
///   argument that begins with `--` is never taken as a value: `--key --other`
///   is "option '--key' requires a value". Write `--key=--odd` if needed.
/// - `--` ends option parsing; everything after it is positional. A lone `-`
///   is positional.
/// - `--help` / `-h` are built in: parsing stops and `helpRequested` is set.
/// - Short flags are not clustered: `-ab` is an unknown option.
/// - An option's old spellings (`Option.aliases`) parse as the option itself.
/// - Errors are `UsageError`s, each one line, naming the offending argument.
public struct ArgumentParser: Sendable {
    public var options: [Option]
    public var positionals: [Positional]

    public init(options: [Option] = [], positionals: [Positional] = []) {
        self.options = options
        self.positionals = positionals
    }

    /// Parses all of `arguments` and checks the positional count against the spec.
    public func parse<Arguments: Collection>(_ arguments: Arguments) throws -> ParsedArguments
    where Arguments.Element == String {
        let (parsed, rest) = try scan(Array(arguments), stopAtFirstPositional: false)
        precondition(rest.isEmpty)
        if parsed.helpRequested { return parsed }
        return try assignPositionals(parsed)
    }

    /// Parses options up to the first positional argument (a subcommand name) and
    /// returns the options parsed so far and the arguments from that positional on.
    public func parsePrefix<Arguments: Collection>(_ arguments: Arguments) throws
        -> (parsed: ParsedArguments, rest: [String])
    where Arguments.Element == String {
        let (parsed, rest) = try scan(Array(arguments), stopAtFirstPositional: true)
        return (parsed, Array(rest))
    }

    private func scan(_ args: [String], stopAtFirstPositional: Bool) throws
        -> (ParsedArguments, ArraySlice<String>) {
        var parsed = ParsedArguments()
        var index = 0
        var onlyPositionals = false

        func takeValue(for option: Option, spelling: String) throws -> String {
            let next = index + 1
            guard next < args.count, !args[next].hasPrefix("--") else {
                throw UsageError.missingValue(spelling)
            }
            index = next
            return args[next]
        }

        func record(_ option: Option, value: String?) {
            if let value {
                parsed.optionValues[option.name, default: []].append(value)
            } else {
                parsed.flagCounts[option.name, default: 0] += 1
            }
        }

        while index < args.count {
            let argument = args[index]
            defer { index += 1 }

            if onlyPositionals || argument == "-" || !argument.hasPrefix("-") {
                if stopAtFirstPositional {
                    return (parsed, args[index...])
                }
                parsed.positionals.append(argument)
                continue
            }
            if argument == "--" {
                onlyPositionals = true
                continue
            }

            if argument.hasPrefix("--") {
                let body = argument.dropFirst(2)
                let name: Substring
                let inline: String?
                if let equals = body.firstIndex(of: "=") {
                    name = body[..<equals]
                    inline = String(body[body.index(after: equals)...])
                } else {
                    name = body
                    inline = nil
                }
                let spelling = "--" + name
                if name == "help" {
                    if inline != nil { throw UsageError.unexpectedValue(spelling) }
                    parsed.helpRequested = true
                    return (parsed, [])
                }
                guard let option = options.first(where: { $0.answers(to: name) }) else {
                    throw UsageError.unknownOption(spelling)
                }
                if option.takesValue {
                    record(option, value: try inline ?? takeValue(for: option, spelling: spelling))
                } else {
                    if inline != nil { throw UsageError.unexpectedValue(spelling) }
                    record(option, value: nil)
                }
            } else {
                let body = argument.dropFirst()
                let letter = body.first!  // argument is "-x..." here: "-" alone was handled above
                let attached = body.dropFirst()
                if letter == "h" && attached.isEmpty {
                    parsed.helpRequested = true
                    return (parsed, [])
                }
                guard let option = options.first(where: { $0.short == letter }) else {
                    throw UsageError.unknownOption(argument)
                }
                let spelling = "-" + String(letter)
                if option.takesValue {
                    record(option, value: attached.isEmpty
                        ? try takeValue(for: option, spelling: spelling) : String(attached))
                } else {
                    if !attached.isEmpty { throw UsageError.unknownOption(argument) }
                    record(option, value: nil)
                }
            }
        }
        return (parsed, [])
    }

    private func assignPositionals(_ parsed: ParsedArguments) throws -> ParsedArguments {
        var result = parsed
        let given = parsed.positionals
        let minimums = positionals.map(\.minimum)
        let required = minimums.reduce(0, +)
        if given.count < required {
            // Optional positionals take nothing here: name the first required one left empty.
            var needed = 0
            for spec in positionals {
                needed += spec.minimum
                if needed > given.count { throw UsageError.missingArgument(spec.name) }
            }
        }
        var cursor = 0
        for (offset, spec) in positionals.enumerated() {
            let laterMinimum = minimums[(offset + 1)...].reduce(0, +)
            let available = given.count - cursor - laterMinimum
            let take = max(spec.minimum, min(spec.maximum, available))
            result.namedPositionals[spec.name] = Array(given[cursor..<(cursor + take)])
            cursor += take
        }
        if cursor < given.count {
            throw UsageError.unexpectedArgument(given[cursor])
        }
        return result
    }
}

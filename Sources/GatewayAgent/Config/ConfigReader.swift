// Typed reads of one JSON object of the config file. Each reader knows its dotted path, so a
// section (console, and later mqtt) is parsed with the same checks and error wording.

struct ConfigReader {
    /// "" for the top level, "console" for the console object.
    let path: String
    let fields: [String: ConfigJSON]

    /// Reads `value` as an object and rejects keys outside `allowed`.
    init(_ value: ConfigJSON, at path: String, allowed: Set<String>) throws(ConfigError) {
        guard case .object(let fields) = value else {
            throw .invalidValue(key: path.isEmpty ? "(top level)" : path, expected: "an object, found \(value.typeName)")
        }
        // Sorted so the key reported does not depend on dictionary order.
        if let unknown = fields.keys.sorted().first(where: { !allowed.contains($0) }) {
            throw .unknownKey(Self.join(path, unknown), expected: allowed.sorted().joined(separator: ", "))
        }
        self.path = path
        self.fields = fields
    }

    func key(_ name: String) -> String { Self.join(path, name) }

    func has(_ name: String) -> Bool { fields[name] != nil }

    func string(_ name: String, expected: String = "a string") throws(ConfigError) -> String? {
        guard let value = fields[name] else { return nil }
        guard case .string(let text) = value else { throw .invalidValue(key: key(name), expected: "\(expected), found \(value.typeName)") }
        return text
    }

    /// A string that must also pass `check`; the error says `expected` and never the value.
    func string<T>(_ name: String, expected: String, _ check: (String) -> T?) throws(ConfigError) -> T? {
        guard let text = try string(name, expected: expected) else { return nil }
        guard let value = check(text) else { throw .invalidValue(key: key(name), expected: expected) }
        return value
    }

    func integer(_ name: String, in range: ClosedRange<Int64>, expected: String? = nil) throws(ConfigError) -> Int? {
        guard let value = fields[name] else { return nil }
        if let problem = value.notIntegerProblem { throw .notInteger(key: key(name), problem: problem) }
        let wording = expected ?? "an integer from \(range.lowerBound) to \(range.upperBound)"
        guard case .integer(let number) = value, range.contains(number) else {
            throw .invalidValue(key: key(name), expected: wording)
        }
        return Int(number)
    }

    func object(_ name: String, allowed: Set<String>) throws(ConfigError) -> ConfigReader? {
        guard let value = fields[name] else { return nil }
        return try ConfigReader(value, at: key(name), allowed: allowed)
    }

    static func join(_ path: String, _ name: String) -> String { path.isEmpty ? name : path + "." + name }
}

// Why the agent's config was rejected. Every error names the key it is about (dotted, like
// "console.baud") and never echoes the value: the file holds the service PIN.

enum ConfigError: Error, Equatable, CustomStringConvertible {
    /// The file could not be read (missing, unreadable, larger than the limit).
    case unreadable(path: String, reason: String)
    /// The bytes are not JSON.
    case malformedJSON(reason: String)
    /// A key the format does not define: a typo must not silently fall back to a default.
    case unknownKey(String, expected: String)
    /// A key has a value of the wrong type or out of range.
    case invalidValue(key: String, expected: String)
    /// A number with a fraction where an integer is expected (17.5): refused, never truncated.
    /// The number is echoed (numbers are never secret here; the PIN is a string).
    case notInteger(key: String, problem: String)
    /// A setting needed for this run is in neither the file nor the command line.
    case missing(key: String, flag: String, why: String)

    /// The dotted key the error is about; nil for whole-file errors.
    var key: String? {
        switch self {
        case .unreadable, .malformedJSON: return nil
        case .unknownKey(let key, _), .invalidValue(let key, _), .missing(let key, _, _), .notInteger(let key, _): return key
        }
    }

    var description: String {
        switch self {
        case .unreadable(_, let reason): return "cannot be read: \(reason)"
        case .malformedJSON(let reason): return "not valid JSON (\(reason))"
        case .unknownKey(let key, let expected): return "unknown key '\(key)' (expected one of \(expected))"
        case .invalidValue(let key, let expected): return "key '\(key)': expected \(expected)"
        case .notInteger(let key, let problem): return "key '\(key)' \(problem)"
        case .missing(let key, let flag, let why):
            return "'\(flag)' (or '\(key)' in the config file) is required" + (why.isEmpty ? "" : " " + why)
        }
    }
}

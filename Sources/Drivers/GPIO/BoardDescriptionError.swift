// Why a board file was rejected, always naming the offending key so a field engineer can fix it.

public enum BoardDescriptionError: Error, Equatable, Sendable, CustomStringConvertible {
    /// The file could not be read (missing, unreadable, larger than the limit).
    case unreadable(path: String, reason: String)
    /// The bytes are not JSON.
    case malformedJSON(reason: String)
    /// A key the format does not define (typos must not silently fall back to defaults);
    /// `expected` lists the keys allowed there.
    case unknownKey(String, expected: String)
    /// A required key is absent.
    case missingKey(String)
    /// A key has a value of the wrong type or out of range.
    case invalidValue(key: String, expected: String)
    /// A number with a fraction where an integer is expected (17.5): refused, never truncated.
    case notInteger(key: String, problem: String)
    /// Two roles claim the same chip line.
    case duplicateLine(key: String, sameAs: String)

    /// The dotted key the error is about, e.g. "outputs.lock.bias"; nil for whole-file errors.
    public var key: String? {
        switch self {
        case .unreadable, .malformedJSON: return nil
        case .unknownKey(let key, _), .missingKey(let key): return key
        case .invalidValue(let key, _), .duplicateLine(let key, _), .notInteger(let key, _): return key
        }
    }

    public var description: String {
        switch self {
        case .unreadable(let path, let reason): return "board file \(path): \(reason)"
        case .malformedJSON(let reason): return "board file: not valid JSON (\(reason))"
        case .unknownKey(let key, let expected): return "\(key): unknown key, expected one of \(expected)"
        case .missingKey(let key): return "\(key): required key is missing"
        case .invalidValue(let key, let expected): return "\(key): expected \(expected)"
        case .notInteger(let key, let problem): return "\(key): \(problem)"
        case .duplicateLine(let key, let other): return "\(key): same chip line as \(other)"
        }
    }
}

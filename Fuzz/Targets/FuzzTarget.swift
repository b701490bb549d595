// One fuzz target: a property function over raw input bytes. The same function runs under
// libFuzzer (carkey-fuzz) and in the XCTest smoke (FuzzTargetsTests), so a property is
// written once and checked both ways.
import Protocol

/// A broken property. libFuzzer's driver traps with `description`; the smoke test fails with it.
public struct PropertyViolation: Error, CustomStringConvertible, Sendable {
    public let property: String
    public var description: String { "fuzz property violated: \(property)" }
}

/// Throws a violation naming `property` when `condition` is false.
@inline(__always)
public func require(_ condition: Bool, _ property: @autoclosure () -> String) throws(PropertyViolation) {
    if !condition { throw PropertyViolation(property: property()) }
}

public struct FuzzTarget: Sendable {
    public let name: String
    /// The properties checked, one line for docs/fuzzing.md and `carkey-fuzz list`.
    public let properties: String
    /// Returns true when the input was accepted by the decoder under test (the seed generator
    /// keeps accepted inputs), throws when a property is broken.
    public let check: @Sendable (Bytes) throws(PropertyViolation) -> Bool

    public init(_ name: String, _ properties: String, _ check: @escaping @Sendable (Bytes) throws(PropertyViolation) -> Bool) {
        self.name = name
        self.properties = properties
        self.check = check
    }
}

/// Common checks for strict binary decoders.
public enum Strict {
    /// decode(b) accepted => length within `maxLength`, encode(decode(b)) == b (canonical),
    /// decode(encode(x)) == x, and, when `closedTail`, b + [0] and b minus its last byte refused.
    public static func roundTrip<T: Equatable>(_ bytes: Bytes, maxLength: Int, closedTail: Bool = true,
                                               decode: (Bytes) throws -> T, encode: (T) -> Bytes) throws(PropertyViolation) -> Bool {
        guard let value = try? decode(bytes) else { return false }
        try require(bytes.count <= maxLength, "accepted \(bytes.count) bytes, documented limit \(maxLength)")
        let again = encode(value)
        try require(again == bytes, "canonical: encode(decode(b)) == b")
        try require((try? decode(again)) == value, "decode(encode(x)) == x")
        if closedTail {
            try require((try? decode(bytes + [0])) == nil, "trailing byte refused")
            try require((try? decode(Array(bytes.dropLast()))) == nil, "truncated input refused")
        }
        return true
    }
}

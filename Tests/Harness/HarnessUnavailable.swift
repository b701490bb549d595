// A real device a test needs (swtpm, SoftHSM2) is not installed or did not start. The harness
// has no XCTest (benchmarks link it too): tests turn this into XCTSkip, or into a failure
// when CARKEY_REQUIRE_ARTIFACTS=1 (`required`).
#if canImport(Glibc)
import Glibc
#endif

public struct HarnessUnavailable: Error, CustomStringConvertible {
    public let description: String

    public init(_ description: String) { self.description = description }

    /// CARKEY_REQUIRE_ARTIFACTS=1: a missing device fails the test instead of skipping it.
    public var required: Bool {
        guard let value = getenv("CARKEY_REQUIRE_ARTIFACTS") else { return false }
        return String(cString: value) == "1"
    }
}

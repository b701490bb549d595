// A device or artifact the test harness could not provide (swtpm, SoftHSM2, a built binary):
// the test is skipped, or fails under CARKEY_REQUIRE_ARTIFACTS=1. TestHarness itself has no
// XCTest (the benchmarks link it), so each test target holds this one turn of the error.
import XCTest
import TestHarness

func requireDevice<T>(_ make: () throws -> T) throws -> T {
    do { return try make() } catch let missing as HarnessUnavailable {
        if missing.required { XCTFail("required by CARKEY_REQUIRE_ARTIFACTS=1: \(missing)") }
        throw XCTSkip(missing.description)
    }
}

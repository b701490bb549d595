// The cloud link logs a failing connect when it starts or changes, not on every retry.
import XCTest
@testable import carkey_agent

final class RepeatFilterTests: XCTestCase {
    func testARepeatedReasonIsLoggedOnceAndCountedWhenItEnds() {
        var filter = RepeatFilter()
        XCTAssertEqual(filter.admit("refused"), "refused")
        for _ in 0..<100 { XCTAssertNil(filter.admit("refused")) }
        XCTAssertEqual(filter.admit("DNS"), "DNS (the previous failure repeated 100 more times)")
        XCTAssertNil(filter.admit("DNS"))
        XCTAssertEqual(filter.end(), 1)
        XCTAssertEqual(filter.admit("DNS"), "DNS", "after a success the same failure is news again")
    }
}

// The tools' ISO 8601 subset: known instants, offsets, calendar checks and bounds.
import XCTest
@testable import Protocol

final class KeysISO8601Tests: XCTestCase {
    func testKnownInstants() throws {
        XCTAssertEqual(try ISO8601.parse("1970-01-01T00:00:00Z"), 0)
        XCTAssertEqual(try ISO8601.parse("2026-01-01T00:00:00Z"), 1_767_225_600)
        XCTAssertEqual(try ISO8601.parse("2026-01-01T01:00:00+01:00"), 1_767_225_600)
        XCTAssertEqual(try ISO8601.parse("2025-12-31T19:30:00-04:30"), 1_767_225_600)
        XCTAssertEqual(try ISO8601.parse("2024-02-29T12:00:00z"), 1_709_208_000)
        XCTAssertEqual(try ISO8601.parse("2000-02-29T00:00:00Z"), 951_782_400, "400-year leap")
        XCTAssertEqual(try ISO8601.parse("2106-02-07T06:28:15Z"), Int64(UInt32.max))
        XCTAssertEqual(ISO8601.format(1_767_225_600), "2026-01-01T00:00:00Z")
        XCTAssertEqual(ISO8601.format(951_782_399), "2000-02-28T23:59:59Z")
        for seconds: Int64 in [0, 59, 86_399, 951_782_400, 1_709_208_000, 4_102_444_799, Int64(UInt32.max)] {
            XCTAssertEqual(try ISO8601.parse(ISO8601.format(seconds)), seconds)
        }
    }

    func testRefusals() {
        for text in ["", "2026-01-01", "2026-01-01T00:00:00", "2026-01-01 00:00:00Z", "2026/01/01T00:00:00Z",
                     "2026-13-01T00:00:00Z", "2026-00-10T00:00:00Z", "2026-02-29T00:00:00Z", "2100-02-29T00:00:00Z",
                     "2026-04-31T00:00:00Z", "2026-01-01T24:00:00Z", "2026-01-01T23:60:00Z", "2026-01-01T23:59:60Z",
                     "1969-12-31T23:59:59Z", "2107-01-01T00:00:00Z", "2026-01-01T00:00:00+24:00",
                     "2026-01-01T00:00:00+01:60", "2026-01-01T00:00:00+0100", "2026-01-01T00:00:00+01:00Z",
                     "+026-01-01T00:00:00Z", "2026-01-01T0a:00:00Z", String(repeating: "9", count: 4_000),
                     "２０２６-01-01T00:00:00Z"] {
            XCTAssertThrowsError(try ISO8601.parse(text), text)
        }
    }
}

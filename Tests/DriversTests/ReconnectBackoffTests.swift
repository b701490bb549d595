// The reconnect schedule: 2, 4, 8, 16, 32, 60 s (capped) plus jitter, reset on CONNACK.
import XCTest
@testable import Drivers

final class ReconnectBackoffTests: XCTestCase {
    func testScheduleDoublesToTheCapWithoutJitter() {
        var backoff = ReconnectBackoff()
        let delays = (0..<9).map { _ in backoff.nextDelayMillis(unitRandom: 0) }
        XCTAssertEqual(delays, [2_000, 4_000, 8_000, 16_000, 32_000, 60_000, 60_000, 60_000, 60_000])
    }

    func testJitterStaysWithinTwentyPercentAbove() {
        var backoff = ReconnectBackoff()
        XCTAssertEqual(backoff.nextDelayMillis(unitRandom: 0.999_999), 2_399)
        XCTAssertEqual(backoff.nextDelayMillis(unitRandom: 0.5), 4_400)
        // Out-of-range randomness is clamped, never negative or runaway.
        XCTAssertEqual(backoff.nextDelayMillis(unitRandom: -3), 8_000)
        XCTAssertEqual(backoff.nextDelayMillis(unitRandom: 7), 19_200)
    }

    func testResetStartsOverAndManyFailuresDoNotOverflow() {
        var backoff = ReconnectBackoff()
        for _ in 0..<10_000 { _ = backoff.nextDelayMillis(unitRandom: 0) }
        XCTAssertEqual(backoff.nominalDelayMillis, 60_000)
        backoff.reset()
        XCTAssertEqual(backoff.nextDelayMillis(unitRandom: 0), 2_000)
    }
}

// Which broker node is tried next and when: virtual time, scripted randomness.
import XCTest
@testable import Drivers

final class EndpointRotationTests: XCTestCase {
    /// Randomness from a list, so each draw is visible in the test.
    private final class Draws {
        var values: [Double]
        var taken = 0
        init(_ values: [Double]) { self.values = values }
        func next() -> Double {
            defer { taken += 1 }
            return taken < values.count ? values[taken] : 0
        }
    }

    func testOneEndpointKeepsTheBackoffScheduleExactly() {
        var rotation = EndpointRotation(count: 1)
        var reference = ReconnectBackoff()
        var now: UInt64 = 0
        for draw in [0.0, 0.5, 0.999, 0.1, 0.0, 0.3, 0.7, 0.2] {
            let at = rotation.failed(nowMillis: now) { draw }
            XCTAssertEqual(at - now, reference.nextDelayMillis(unitRandom: draw))
            XCTAssertEqual(rotation.current, 0)
            now = at
        }
        rotation.connected()
        XCTAssertEqual(rotation.failed(nowMillis: now) { 0 } - now, 2_000, "a good CONNACK starts the schedule over")
    }

    func testTwoNodesAlternateWithTheirOwnBackoffAndASwitchJitter() {
        var rotation = EndpointRotation(count: 2)
        rotation.connected()                       // A (0) was good
        let draws = Draws([0, 0.5])
        // A dies at 10 s: B was never tried, so it is due at once, after the switch jitter.
        XCTAssertEqual(rotation.failed(nowMillis: 10_000, unitRandom: draws.next), 10_500)
        XCTAssertEqual(rotation.current, 1)
        XCTAssertEqual(draws.taken, 2, "one draw for A's backoff, one for the switch")
        // B refuses at 10.5 s: A is due at 12 s (its first backoff step), B at 12.5 s.
        XCTAssertEqual(rotation.failed(nowMillis: 10_500) { 0 }, 12_000)
        XCTAssertEqual(rotation.current, 0)
        // A fails again: its next step is 4 s (until 16 s); B is due at 12.5 s, no extra jitter.
        XCTAssertEqual(rotation.failed(nowMillis: 12_000) { 0 }, 12_500)
        XCTAssertEqual(rotation.current, 1)
        // B connects: its backoff starts over, A's does not.
        rotation.connected()
        XCTAssertEqual(rotation.lastGood, 1)
        XCTAssertEqual(rotation.backoffs.map(\.failures), [2, 0])
        // B dies much later: A is long due, so the link moves to A (after a switch jitter).
        XCTAssertEqual(rotation.failed(nowMillis: 100_000) { 0 }, 100_000)
        XCTAssertEqual(rotation.current, 0)
    }

    func testTiesGoToTheLastGoodEndpointThenListOrder() {
        var rotation = EndpointRotation(count: 3)
        // A fails at start: B and C are both due, list order after A picks B.
        _ = rotation.failed(nowMillis: 0) { 0 }
        XCTAssertEqual(rotation.current, 1)
        rotation.connected()                       // B good
        // B lost at 100 s: A (due since 2 s) and C (never tried) tie; list order after B: C.
        _ = rotation.failed(nowMillis: 100_000) { 0 }
        XCTAssertEqual(rotation.current, 2)
        // C fails 3 s later: A is due and so is B again (its 2 s are over); the last good wins,
        // although list order after C would say A.
        _ = rotation.failed(nowMillis: 103_000) { 0 }
        XCTAssertEqual(rotation.current, 1, "the last good endpoint is preferred")
    }

    func testAllNodesDownSettleAtTheCapPerNode() {
        var rotation = EndpointRotation(count: 2)
        var now: UInt64 = 0
        var attempts: [(UInt64, Int)] = []
        for _ in 0..<30 {
            now = rotation.failed(nowMillis: now) { 0 }
            attempts.append((now, rotation.current))
        }
        // Late in the outage each node is tried once per minute (the cap), never faster.
        let late = attempts.suffix(10)
        for node in 0..<2 {
            let times = late.filter { $0.1 == node }.map(\.0)
            XCTAssertFalse(times.isEmpty)
            XCTAssertTrue(zip(times.dropFirst(), times).allSatisfy { $0 - $1 == 60_000 }, "\(times)")
        }
    }
}

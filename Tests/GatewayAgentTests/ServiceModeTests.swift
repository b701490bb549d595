// Service mode on the console: the PIN, the timeout, and the lockout after wrong PINs.
import XCTest
@testable import carkey_agent

final class ServiceModeTests: XCTestCase {
    private let pin = ServicePIN(text: "2468")

    func testRightPINEnablesForTheTimeout() {
        var mode = ServiceMode(pin: pin, timeoutSeconds: 60)
        XCTAssertFalse(mode.isActive(now: 0))
        XCTAssertEqual(mode.enable(attempt: "2468", now: 1000), .enabled(untilMillis: 61_000))
        XCTAssertTrue(mode.isActive(now: 60_999))
        XCTAssertEqual(mode.remaining(now: 31_000), 30_000)
        XCTAssertFalse(mode.isActive(now: 61_000), "times out")
        XCTAssertEqual(mode.enable(attempt: "2468", now: 70_000), .enabled(untilMillis: 130_000))
        mode.disable()
        XCTAssertFalse(mode.isActive(now: 70_001))
    }

    func testWrongPINsLockOutWithGrowingLockouts() {
        var mode = ServiceMode(pin: pin, timeoutSeconds: 60)
        XCTAssertEqual(mode.enable(attempt: "0000", now: 0), .wrongPIN(attemptsLeft: 2))
        XCTAssertEqual(mode.enable(attempt: "0001", now: 0), .wrongPIN(attemptsLeft: 1))
        XCTAssertEqual(mode.enable(attempt: "0002", now: 0), .lockedOut(remainingMillis: 30_000))
        XCTAssertEqual(mode.enable(attempt: "2468", now: 29_999), .lockedOut(remainingMillis: 1), "not even checked")
        XCTAssertFalse(mode.isActive(now: 29_999))
        for attempt in ["1", "2"] { _ = mode.enable(attempt: attempt, now: 30_000) }
        XCTAssertEqual(mode.enable(attempt: "3", now: 30_000), .lockedOut(remainingMillis: 60_000), "doubled")
        XCTAssertEqual(mode.enable(attempt: "2468", now: 90_000), .enabled(untilMillis: 150_000))
        XCTAssertEqual(mode.enable(attempt: "9", now: 90_000), .wrongPIN(attemptsLeft: 2), "success resets the count")
    }

    func testTheLockoutIsCapped() {
        var mode = ServiceMode(pin: pin, timeoutSeconds: 60)
        var now: UInt64 = 0
        var last = ServiceMode.Attempt.notConfigured
        for _ in 0..<40 {
            last = mode.enable(attempt: "x", now: now)
            if case .lockedOut(let remaining) = last { now += remaining }
        }
        if case .lockedOut(let remaining) = mode.enable(attempt: "x", now: now - 1) {
            XCTAssertLessThanOrEqual(remaining, ServiceMode.maxLockoutMillis)
        }
        XCTAssertNotEqual(last, .notConfigured)
    }

    func testNoPINNoServiceMode() {
        var mode = ServiceMode(pin: nil, timeoutSeconds: 60)
        XCTAssertEqual(mode.enable(attempt: "", now: 0), .notConfigured)
        XCTAssertFalse(mode.isActive(now: 0))
    }
}

// Service mode's parts in process: the timeout, the PIN's guess limit across restarts
// (ServicePINLockout with ServiceLockoutStore on a real SQLite store), and the figure the
// issue asks for: checked guesses a day with the agent restarted as often as it will go.
import XCTest
import Drivers
import Protocol
@testable import carkey_agent

final class ServiceModeTests: XCTestCase {
    private var folder = ""

    override func setUp() { folder = AgentTestSupport.temporaryDirectory() }
    override func tearDown() { AgentTestSupport.removeTree(folder) }

    func testServiceModeTimesOut() {
        var mode = ServiceMode(timeoutSeconds: 60)
        XCTAssertFalse(mode.isActive(now: 0))
        XCTAssertEqual(mode.enter(now: 1000), 61_000)
        XCTAssertTrue(mode.isActive(now: 60_999))
        XCTAssertEqual(mode.remaining(now: 31_000), 30_000)
        XCTAssertFalse(mode.isActive(now: 61_000), "times out")
        XCTAssertEqual(mode.enter(now: 70_000), 130_000)
        mode.disable()
        XCTAssertFalse(mode.isActive(now: 70_001))
        XCTAssertEqual(mode.remaining(now: 70_001), 0)
    }

    func testTheLockoutSchedule() {
        let seconds = (1...14).map { ServicePINLockout.lockoutMillis(afterFailures: UInt32($0)) / 1000 }
        XCTAssertEqual(seconds, [0, 0, 30, 60, 120, 240, 480, 960, 1920, 3840, 7680, 14400, 14400, 14400])
        XCTAssertEqual(ServicePINLockout.lockoutMillis(afterFailures: .max), ServicePINLockout.maxLockoutMillis, "no overflow")
    }

    func testEachAttemptIsCountedBeforeItIsCheckedAndOnlySuccessResets() {
        var lockout = ServicePINLockout(.clear, nowMillis: 0, wallSeconds: 1_000)
        XCTAssertEqual(lockout.beforeAttempt(nowMillis: 0, wallSeconds: 1_000), .init(failures: 1, lockedUntilWallSeconds: 0))
        XCTAssertEqual(lockout.wrong(nowMillis: 0).left, 2)
        XCTAssertEqual(lockout.wrong(nowMillis: 0).left, 1)
        XCTAssertEqual(lockout.beforeAttempt(nowMillis: 0, wallSeconds: 1_000), .init(failures: 3, lockedUntilWallSeconds: 1_030),
                       "what is stored before the 3rd comparison already carries its lockout")
        let third = lockout.wrong(nowMillis: 0)
        XCTAssertEqual(third.left, 0)
        XCTAssertEqual(third.lockoutMillis, 30_000)
        XCTAssertNil(lockout.beforeAttempt(nowMillis: 29_999, wallSeconds: 1_029), "locked out: nothing is compared")
        XCTAssertEqual(lockout.remainingMillis(nowMillis: 29_999), 1)
        XCTAssertEqual(lockout.beforeAttempt(nowMillis: 30_000, wallSeconds: 1_030), .init(failures: 4, lockedUntilWallSeconds: 1_090))
        lockout.reset()
        XCTAssertEqual(lockout.failures, 0)
        XCTAssertEqual(lockout.beforeAttempt(nowMillis: 30_000, wallSeconds: 1_030), .init(failures: 1, lockedUntilWallSeconds: 0))
    }

    func testARestartKeepsTheLockoutButAClockGoneBackCannotStretchIt() {
        let stored = ServicePINLockout.Persisted(failures: 5, lockedUntilWallSeconds: 10_120)  // 5th wrong: 120 s
        let same = ServicePINLockout(stored, nowMillis: 0, wallSeconds: 10_100)
        XCTAssertEqual(same.remainingMillis(nowMillis: 0), 20_000, "restarted 100 s into a 120 s lockout")
        XCTAssertEqual(same.failures, 5)
        let back = ServicePINLockout(stored, nowMillis: 0, wallSeconds: 0)
        XCTAssertEqual(back.remainingMillis(nowMillis: 0), 120_000, "a clock reset to 1970 gives the lockout's own length, not 2.8 h")
        let ahead = ServicePINLockout(stored, nowMillis: 0, wallSeconds: 20_000)
        XCTAssertEqual(ahead.remainingMillis(nowMillis: 0), 0)
        XCTAssertNotNil(ahead.beforeAttempt(nowMillis: 0, wallSeconds: 20_000))
        XCTAssertEqual(ahead.beforeAttempt(nowMillis: 0, wallSeconds: 20_000)?.failures, 6, "the count goes on after the lockout")
        let unreadable = ServicePINLockout.unreadable(nowMillis: 5)
        XCTAssertEqual(unreadable.remainingMillis(nowMillis: 5), ServicePINLockout.maxLockoutMillis)
    }

    func testTheStoreKeepsTheCountAndRefusesAnUnreadableRow() throws {
        let store = try CarStore.open(stateDirectory: folder + "/state")
        XCTAssertEqual(ServiceLockoutStore.load(store), .state(.clear), "nothing stored yet")
        let state = ServicePINLockout.Persisted(failures: 0x0102_0304, lockedUntilWallSeconds: 0x0506_0708_090a)
        XCTAssertEqual(ServiceLockoutStore.encode(state), Bytes(hex: "53010102030400000506070809 0a".filter { $0 != " " })!)
        try ServiceLockoutStore.save(state, in: store)
        let reopened = try CarStore.open(stateDirectory: folder + "/state")
        XCTAssertEqual(ServiceLockoutStore.load(reopened), .state(state), "survives closing the store")
        try reopened.put([0x53, 0x01, 0x00], kind: ServiceLockoutStore.kind, id: ServiceLockoutStore.id)
        guard case .unreadable = ServiceLockoutStore.load(reopened) else { return XCTFail("a short row is unreadable") }
        XCTAssertNil(ServiceLockoutStore.decode([0x54, 0x01] + Bytes(repeating: 0, count: 12)), "wrong tag")
        XCTAssertNil(ServiceLockoutStore.decode([0x53, 0x02] + Bytes(repeating: 0, count: 12)), "unknown format")
    }

    /// The figure: an attacker at the console restarts the agent every 0.3 s (power cut; the
    /// monotonic clock starts again at 0) and tries a PIN whenever one is compared. Counted:
    /// PINs actually compared in 24 h, and in the 24 h after that.
    func testCheckedGuessesPerDayWithRestarts() {
        var persisted = ServicePINLockout.Persisted.clear
        let restartMillis: UInt64 = 300
        var now: UInt64 = 0  // wall time since the attack began
        var checked: [Int] = [0, 0]
        var restarts = 0
        while now < 2 * 86_400_000 {
            // One boot: the state comes from the store.
            var lockout = ServicePINLockout(persisted, nowMillis: 0, wallSeconds: Int64(now / 1000))
            restarts += 1
            let remaining = lockout.remainingMillis(nowMillis: 0)
            if remaining > 0 {
                // Every attempt in this boot is refused unchecked; the attacker restarts again
                // (skipping ahead whole restarts: nothing changes meanwhile).
                now += max(restartMillis, (remaining + restartMillis - 1) / restartMillis * restartMillis)
                continue
            }
            guard let counted = lockout.beforeAttempt(nowMillis: 0, wallSeconds: Int64(now / 1000)) else { return XCTFail() }
            persisted = counted  // stored before the comparison
            checked[now < 86_400_000 ? 0 : 1] += 1
            _ = lockout.wrong(nowMillis: 0)
            now += restartMillis
        }
        print("service PIN: checked guesses with a restart every 0.3 s: \(checked[0]) in the first 24 h, \(checked[1]) in the next 24 h")
        XCTAssertEqual(checked[0], 16)
        XCTAssertEqual(checked[1], 6)
    }
}

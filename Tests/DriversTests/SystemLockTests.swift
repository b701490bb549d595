// Lock and Condition (System/Lock.swift) under contention: a plain counter guarded by the lock
// loses no increment across threads (without the lock it does, and TSan reports the race), and
// waiters woken by a broadcast see the state set under the lock.
import Drivers
import XCTest

final class SystemLockTests: XCTestCase {
    /// Unsynchronised on purpose: only the Lock under test protects it.
    final class Counter: @unchecked Sendable {
        var value = 0
        var ready = false
        var served = 0
    }

    func testLockedIncrementsAreNeverLost() throws {
        let lock = Lock()
        let counter = Counter()
        let threads = try (0..<4).map { index in
            try SystemThread.start(name: "lock-\(index)") {
                for _ in 0..<20_000 { lock.withLock { counter.value += 1 } }
            }
        }
        threads.forEach { $0.join() }
        XCTAssertEqual(lock.withLock { counter.value }, 80_000)
    }

    func testBroadcastWakesEveryWaiter() throws {
        let lock = Lock()
        let condition = Condition()
        let state = Counter()
        let waiters = try (0..<4).map { index in
            try SystemThread.start(name: "wait-\(index)") {
                lock.withLock {
                    while !state.ready { condition.wait(lock) }
                    state.served += 1
                }
            }
        }
        lock.withLock { state.ready = true }
        condition.broadcast()
        waiters.forEach { $0.join() }
        XCTAssertEqual(lock.withLock { state.served }, 4)
    }

    func testTimedWaitTimesOutWithoutASignalAndReturnsTrueWithOne() throws {
        let lock = Lock()
        let condition = Condition()
        let timedOut = lock.withLock { condition.wait(lock, timeoutMillis: 10) }
        XCTAssertFalse(timedOut, "nobody signalled")

        let state = Counter()
        let signaller = try SystemThread.start(name: "signaller") {
            lock.withLock { state.ready = true }
            condition.signal()
        }
        // Bounded: 30 s is a hang, not a timing assertion.
        let woke = lock.withLock { () -> Bool in
            while !state.ready {
                if !condition.wait(lock, timeoutMillis: 30_000) { return false }
            }
            return true
        }
        signaller.join()
        XCTAssertTrue(woke)
    }
}

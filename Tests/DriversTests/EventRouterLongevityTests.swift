// Regression test for the crash after minutes of uptime with the cloud link on: the store read
// its event router (then a closure) out of a Mutex on every transaction, and each read wrapped
// it in one more re-abstraction thunk. 30,000 layers overflowed the stack at the next event.
// The router is now a protocol-typed object; reading it must cost neither memory nor stack.
import XCTest
@testable import Drivers
import Protocol
import TestHarness
import Synchronization

final class EventRouterLongevityTests: StorageTestCase {
    /// Routes every event and remembers how deep below the caller's frame it ran.
    private final class DepthProbe: EventRouter {
        let deepest = Mutex<UInt>(0)
        let callerFrame = Mutex<UInt>(0)

        func route(_ event: StoredEvent) -> OutboxEntry? {
            var marker = 0
            let here = withUnsafeMutablePointer(to: &marker) { UInt(bitPattern: $0) }
            let caller = callerFrame.withLock { $0 }
            deepest.withLock { $0 = max($0, caller > here ? caller - here : 0) }
            return OutboxEntry(topic: "vehicles/V/events", payload: [1], qos: 1, priority: .event,
                               sequence: event.seq, uuid: event.uuid)
        }

        func markCaller() {
            var marker = 0
            let here = withUnsafeMutablePointer(to: &marker) { UInt(bitPattern: $0) }
            callerFrame.withLock { $0 = here }
        }
    }

    private func event(_ text: String) -> NewEvent {
        NewEvent(kind: .accessDecision, time: EventTime(seconds: 1_700_000_000, trusted: true), action: EventAction(unlisted: text), result: "ok")
    }

    func testReadingTheRouterAMillionTimesKeepsMemoryAndStackFlat() throws {
        let store = try openStore()
        let probe = DepthProbe()
        try store.routeEvents(probe)

        // Warm up (allocator pools, the statement cache), then measure.
        probe.markCaller()
        try store.appendEvent(event("warm-up"))
        let shallow = probe.deepest.withLock { $0 }
        for _ in 0..<10_000 { _ = store.currentRouter() }
        let before = try XCTUnwrap(ProcessStats.sample()).residentBytes

        // What the cloud thread did about 20 times a second: a million reads is about 14 hours.
        for _ in 0..<1_000_000 { _ = store.currentRouter() }
        // And the real path: read transactions (each reads the router once).
        for _ in 0..<20_000 { _ = try store.read { _ in 0 } }
        let after = try XCTUnwrap(ProcessStats.sample()).residentBytes
        // A thunk chain costs about 250 bytes a read (25 MB per 100,000 reads in the report, so
        // 250 MB here); under ASan the quarantine alone moves RSS by about 2 MB (the slack).
        let bound = (1 << 20) + SanitizerAllowance.rssSlackBytes
        XCTAssertLessThan(after - before, bound, "resident memory grew by \(after - before) bytes over a million reads")
        guard after - before < bound else { return }  // calling a chain that long would crash the test process

        probe.markCaller()
        try store.appendEvent(event("after a million reads"))
        let deep = probe.deepest.withLock { $0 }
        XCTAssertLessThan(deep, shallow + 4096,
                          "routing an event ran \(deep) bytes below its caller (was \(shallow) before the reads)")
        XCTAssertEqual(try SQLiteOutbox(store: store).depth(), 2, "both events were routed")
    }
}

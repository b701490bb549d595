// The store tells its OutboxObserver after a committed write that added outbox rows, and only
// then: the cloud thread reads the outbox on that signal instead of on every pass.
import XCTest
import Synchronization
@testable import Drivers
import Protocol

final class CountingObserver: OutboxObserver {
    private let count = Atomic<Int>(0)
    var notifications: Int { count.load(ordering: .relaxed) }
    func outboxEnqueued() { count.add(1, ordering: .relaxed) }
}

final class StorageOutboxObserverTests: StorageTestCase {
    private struct Abort: Error {}

    private func entry(_ text: String) -> OutboxEntry {
        OutboxEntry(topic: "vehicles/V/events", payload: Bytes(text.utf8), qos: 1, priority: .event, sequence: 0)
    }

    func testOnlyACommittedWriteThatEnqueuedNotifiesOncePerTransaction() throws {
        let store = try openStore()
        let observer = CountingObserver()
        store.observeOutbox(observer)

        try store.write { transaction in
            for i in 1...3 { try transaction.enqueue(entry("e\(i)")) }
        }
        XCTAssertEqual(observer.notifications, 1, "one commit, one notification")

        try store.appendEvent(accessEvent("lock"))
        _ = try store.read { try $0.outboxDepth() }
        XCTAssertEqual(observer.notifications, 1, "no outbox rows (nothing routes events yet), or a read: no notification")

        XCTAssertThrowsError(try store.write { transaction in
            try transaction.enqueue(entry("rolled back"))
            throw Abort()
        })
        XCTAssertEqual(observer.notifications, 1, "a rolled-back enqueue is no news")
        XCTAssertEqual(try store.read { try $0.outboxDepth() }, 3)

        try store.routeEvents(EventRouterFunction { event in
            OutboxEntry(topic: "vehicles/V/events", payload: Bytes(event.event.action.utf8), qos: 1, priority: .accessEvent,
                        sequence: event.seq)
        })
        XCTAssertEqual(observer.notifications, 1, "routing the earlier event happens before anyone reads: the link starts by reading")
        try store.appendEvent(accessEvent("unlock"))
        XCTAssertEqual(observer.notifications, 2, "a routed event is an outbox row")

        store.observeOutbox(nil)
        try store.appendEvent(accessEvent("lock"))
        XCTAssertEqual(observer.notifications, 2, "removed observers hear nothing")
    }

    func testAcknowledgementFlushIsDueOnlyWhileAcknowledgementsAreBuffered() throws {
        let outbox = SQLiteOutbox(store: try openStore())
        XCTAssertNil(outbox.acknowledgementFlushDue, "nothing buffered: no timer")
        try outbox.store.write { transaction in
            for i in 1...2 { try transaction.enqueue(entry("e\(i)")) }
        }
        let pending = try outbox.pending(afterID: 0, limit: 10)
        try outbox.acknowledge(id: pending[0].id)
        let due = try XCTUnwrap(outbox.acknowledgementFlushDue)
        try outbox.acknowledge(id: pending[1].id)
        XCTAssertEqual(outbox.acknowledgementFlushDue, due, "due from the first buffered acknowledgement")
        try outbox.flushAcknowledgements()
        XCTAssertNil(outbox.acknowledgementFlushDue)
        XCTAssertEqual(try outbox.depth(), 0)
    }
}

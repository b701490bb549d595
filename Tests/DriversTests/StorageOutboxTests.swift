// The durable outbox in the car's SQLite store: ordering, acknowledgement, refusals,
// coalescing, the disk budget, inbound de-duplication, birth numbers and group commit.
import XCTest
@testable import Drivers
import Protocol

final class StorageOutboxTests: StorageTestCase {
    private func entry(_ topic: String, _ text: String, priority: OutboxPriority = .event, sequence: Int64 = 0,
                       coalesce: String? = nil) -> OutboxEntry {
        OutboxEntry(topic: topic, payload: Bytes(text.utf8), qos: 1, priority: priority, sequence: sequence, coalesceKey: coalesce)
    }

    func testEnqueuedMessagesSurviveReopenInOrderAndLeaveOnlyWhenAcknowledged() throws {
        do {
            let store = try openStore()
            try store.write { transaction in
                for i in 1...5 { try transaction.enqueue(entry("vehicles/V/events", "e\(i)")) }
            }
        }
        let outbox = SQLiteOutbox(store: try openStore())
        let pending = try outbox.pending(afterID: 0, limit: 10)
        XCTAssertEqual(pending.map { String(decoding: $0.payload, as: UTF8.self) }, ["e1", "e2", "e3", "e4", "e5"])
        XCTAssertEqual(Set(pending.map(\.uuid)).count, 5, "each message has its own UUID")
        XCTAssertEqual(try outbox.pending(afterID: pending[1].id, limit: 2).map(\.id), [pending[2].id, pending[3].id])
        try outbox.acknowledge(id: pending[0].id)
        try outbox.acknowledge(id: pending[1].id)
        XCTAssertEqual(try outbox.depth(), 3)
    }

    func testRefusedMessageIsKeptAndHoldsItsTopicOnly() throws {
        let outbox = SQLiteOutbox(store: try openStore())
        try outbox.store.write { transaction in
            try transaction.enqueue(entry("vehicles/V/events", "a"))
            try transaction.enqueue(entry("vehicles/V/events", "b"))
            try transaction.enqueue(entry("vehicles/V/results", "c", priority: .commandResult))
        }
        let first = try outbox.pending(afterID: 0, limit: 10)
        try outbox.recordRefusal(id: first[0].id, reasonCode: 0x87, atMillis: 0)
        let afterRefusal = try outbox.pending(afterID: 0, limit: 10)
        XCTAssertEqual(afterRefusal.map(\.topic), ["vehicles/V/results"], "the refused topic waits, others flow")
        let status = try outbox.status()
        XCTAssertEqual(status.depth, 3)
        XCTAssertEqual(status.refused, 1)
        XCTAssertEqual(status.lastError?.contains("0x87"), true)
        try outbox.releaseRefusals()
        XCTAssertEqual(try outbox.pending(afterID: 0, limit: 10).count, 3)
    }

    func testStateReportsCoalesceToTheLatest() throws {
        let outbox = SQLiteOutbox(store: try openStore())
        try outbox.store.write { transaction in
            try transaction.enqueue(entry("vehicles/V/state", "locked", priority: .stateReport, coalesce: "state"))
            try transaction.enqueue(entry("vehicles/V/events", "e", priority: .accessEvent))
            try transaction.enqueue(entry("vehicles/V/state", "unlocked", priority: .stateReport, coalesce: "state"))
        }
        XCTAssertEqual(try outbox.pending(afterID: 0, limit: 10).map { String(decoding: $0.payload, as: UTF8.self) }, ["e", "unlocked"])
    }

    func testBudgetShedsDroppableMessagesButNeverCommandResultsOrAccessEvents() throws {
        let outbox = SQLiteOutbox(store: try openStore())
        let budget = OutboxBudget(maxBytes: 100)
        let blob = String(repeating: "x", count: 40)
        try outbox.store.write { transaction in
            try transaction.enqueue(entry("r", blob, priority: .commandResult), budget: budget)
            try transaction.enqueue(entry("s", blob, priority: .stateReport), budget: budget)
            try transaction.enqueue(entry("e", blob, priority: .event), budget: budget)       // 120 > 100: state report shed
            try transaction.enqueue(entry("a", blob, priority: .accessEvent), budget: budget)  // 120 > 100: plain event shed
            try transaction.enqueue(entry("r", blob, priority: .commandResult), budget: budget) // over budget, nothing droppable left
        }
        XCTAssertEqual(try outbox.pending(afterID: 0, limit: 10).map(\.topic), ["r", "a", "r"])
    }

    func testAcknowledgingEventsAdvancesThePublishedCursorContiguously() throws {
        let store = try openStore()
        try store.routeEvents(EventRouterFunction { event in
            OutboxEntry(topic: "vehicles/V/events", payload: Bytes("{\"seq\":\(event.seq)}".utf8), qos: 1,
                        priority: .accessEvent, sequence: event.seq, uuid: event.uuid)
        })
        for i in 1...3 { try store.appendEvent(accessEvent("unlock \(i)")) }
        let outbox = SQLiteOutbox(store: store)
        let pending = try outbox.pending(afterID: 0, limit: 10)
        XCTAssertEqual(pending.map(\.sequence), [1, 2, 3])
        XCTAssertEqual(pending.map(\.uuid), try store.events(since: 0).map(\.uuid), "the event's UUID is the message's")
        // Acknowledged out of order: the cursor stops below the oldest still waiting.
        try outbox.acknowledge(id: pending[2].id)
        try outbox.flushAcknowledgements()
        XCTAssertEqual(try store.read { try $0.eventsPublishedThrough() }, 0)
        try outbox.acknowledge(id: pending[0].id)
        try outbox.flushAcknowledgements()
        XCTAssertEqual(try store.read { try $0.eventsPublishedThrough() }, 1)
        try outbox.acknowledge(id: pending[1].id)
        try outbox.flushAcknowledgements()
        XCTAssertEqual(try store.read { try $0.eventsPublishedThrough() }, 3)
    }

    /// Events appended while nothing routes them (start-up: permission repairs, tamper findings;
    /// or a run without the cloud) had no outbox row, ever: a permanent gap in the cloud's
    /// sequence, and the published cursor later jumped over them. Routing starts with them.
    func testEventsAppendedBeforeRoutingAreQueuedWhenRoutingStarts() throws {
        let route = EventRouterFunction { event in
            OutboxEntry(topic: "vehicles/V/events", payload: Bytes("{\"seq\":\(event.seq)}".utf8), qos: 1,
                        priority: .event, sequence: event.seq, uuid: event.uuid)
        }
        do {
            try openStore().appendEvent(accessEvent("unlock while offline"))
        }
        let store = try openStore()
        try store.appendEvent(accessEvent("tamper found at start-up"))
        try store.routeEvents(route)
        try store.appendEvent(accessEvent("unlock online"))
        let pending = try SQLiteOutbox(store: store).pending(afterID: 0, limit: 10)
        XCTAssertEqual(pending.map(\.sequence), [1, 2, 3], "every event has its outbox row, in order")
        XCTAssertEqual(pending.map(\.uuid), try store.events(since: 0).map(\.uuid))
        let restarted = try openStore()
        try restarted.routeEvents(route)
        XCTAssertEqual(try SQLiteOutbox(store: restarted).depth(), 3, "nothing is queued twice")
    }

    func testAnEventAndItsOutboxRowCommitTogether() throws {
        let store = try openStore()
        try store.routeEvents(EventRouterFunction { event in OutboxEntry(topic: "t", payload: [1], qos: 1, priority: .event, sequence: event.seq, uuid: event.uuid) })
        struct Abort: Error {}
        XCTAssertThrowsError(try store.write { transaction in
            try transaction.appendEvent(accessEvent("unlock"))
            throw Abort()
        })
        XCTAssertEqual(try store.lastEventSequence(), 0)
        XCTAssertEqual(try SQLiteOutbox(store: store).depth(), 0, "rolled back together")
    }

    func testInboundDeduplicationSurvivesRestartAndIsBounded() throws {
        do {
            let store = try openStore()
            XCTAssertTrue(try store.write { try $0.markInboundSeen("u-1") })
            XCTAssertFalse(try store.write { try $0.markInboundSeen("u-1") })
        }
        let store = try openStore()
        XCTAssertFalse(try store.write { try $0.markInboundSeen("u-1") }, "remembered across a restart")
        for i in 2...12 { _ = try store.write { try $0.markInboundSeen("u-\(i)", keep: 10) } }
        XCTAssertTrue(try store.write { try $0.markInboundSeen("u-1", keep: 10) }, "only the newest 10 are kept")
        XCTAssertFalse(try store.write { try $0.markInboundSeen("u-12", keep: 10) })
    }

    func testBirthSequenceIncreasesAcrossRestarts() throws {
        XCTAssertEqual(try SQLiteOutbox(store: try openStore()).nextBirthSequence(), 1)
        XCTAssertEqual(try SQLiteOutbox(store: try openStore()).nextBirthSequence(), 2)
    }

    func testGroupCommitSharesTransactionsAcrossConcurrentProducers() throws {
        let outbox = SQLiteOutbox(store: try openStore())
        let committer = GroupCommitter(outbox: outbox)
        let producers = 8, perProducer = 50
        final class Slots: @unchecked Sendable {
            let pointer: UnsafeMutablePointer<Int64>
            let count: Int
            init(_ n: Int) { count = n; pointer = .allocate(capacity: n); pointer.initialize(repeating: -1, count: n) }
            deinit { pointer.deallocate() }
            var values: [Int64] { Array(UnsafeBufferPointer(start: pointer, count: count)) }
        }
        let slots = Slots(producers * perProducer)  // each thread writes only its own range
        DispatchQueueless.concurrentPerform(iterations: producers) { producer in
            for i in 0..<perProducer {
                slots.pointer[producer * perProducer + i] = (try? committer.enqueue(OutboxEntry(topic: "p\(producer)", payload: Bytes("\(i)".utf8),
                                                                                      qos: 1, priority: .event))) ?? -1
            }
        }
        let ids = slots.values
        XCTAssertFalse(ids.contains(-1))
        XCTAssertEqual(Set(ids).count, producers * perProducer)
        XCTAssertEqual(try outbox.depth(), producers * perProducer)
        XCTAssertLessThan(committer.commits, producers * perProducer, "some enqueues shared a commit")
        // Per producer (per topic), order is enqueue order.
        for producer in 0..<producers {
            let payloads = try outbox.pending(afterID: 0, limit: 1000).filter { $0.topic == "p\(producer)" }
                .map { String(decoding: $0.payload, as: UTF8.self) }
            XCTAssertEqual(payloads, (0..<perProducer).map(String.init))
        }
    }
}

extension StorageOutboxTests {
    func testABurstIsOneCommitInOrder() throws {
        let outbox = SQLiteOutbox(store: try openStore())
        let committer = GroupCommitter(outbox: outbox)
        let ids = try committer.enqueue((0..<20).map { OutboxEntry(topic: "t", payload: Bytes("\($0)".utf8), qos: 1, priority: .event) })
        XCTAssertEqual(ids.count, 20)
        XCTAssertEqual(ids, Array(ids[0]...ids[0] + 19), "consecutive, in order")
        XCTAssertEqual(committer.commits, 1)
        XCTAssertEqual(try outbox.pending(afterID: 0, limit: 100).map { String(decoding: $0.payload, as: UTF8.self) }, (0..<20).map(String.init))
        XCTAssertEqual(try committer.enqueue([]), [])
    }
}

/// Runs `body` on `iterations` threads at once and waits for all (no Dispatch dependency).
enum DispatchQueueless {
    static func concurrentPerform(iterations: Int, _ body: @escaping @Sendable (Int) -> Void) {
        final class Box: @unchecked Sendable {
            let body: @Sendable (Int) -> Void
            let index: Int
            init(_ body: @escaping @Sendable (Int) -> Void, _ index: Int) { self.body = body; self.index = index }
        }
        var threads: [pthread_t] = []
        for index in 0..<iterations {
            var thread = pthread_t()
            let box = Unmanaged.passRetained(Box(body, index)).toOpaque()
            pthread_create(&thread, nil, { raw in
                let box = Unmanaged<Box>.fromOpaque(raw!).takeRetainedValue()
                box.body(box.index)
                return nil
            }, box)
            threads.append(thread)
        }
        for thread in threads { pthread_join(thread, nil) }
    }
}

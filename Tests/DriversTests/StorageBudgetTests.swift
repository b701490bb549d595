// The store budget: pruning order, the prune event and its rate limit, age pruning, the page
// cap that bounds the file, and the reserve that security writes may spend.
import XCTest
@testable import Drivers
import Protocol
import TestHarness
#if canImport(Glibc)
import Glibc
#endif

final class StorageBudgetTests: StorageTestCase {
    private let now: Int64 = 1_700_000_000

    private func openStore(budget: StoreBudget) throws -> CarStore {
        try CarStore.open(stateDirectory: stateDir, clock: { EventTime(seconds: 1_700_000_000, trusted: true) }, budget: budget)
    }

    private func event(_ kind: EventKind, _ action: String, age: Int64 = 0) -> NewEvent {
        NewEvent(kind: kind, time: EventTime(seconds: now - age, trusted: true), actor: "0a1b2c", action: EventAction(unlisted: action), result: "ok")
    }

    private static func threadCPUMicros() -> Int64 {
        var spec = timespec()
        clock_gettime(CLOCK_THREAD_CPUTIME_ID, &spec)
        return Int64(spec.tv_sec) * 1_000_000 + Int64(spec.tv_nsec) / 1000
    }

    private func fileBytes(_ path: String) -> Int64 {
        var info = stat()
        return stat(path, &info) == 0 ? Int64(info.st_size) : 0
    }

    func testTheRulesClassifySessionNoiseOrdinaryAndCriticalEvents() {
        XCTAssertEqual(EventRetention.of(event(.accessDecision, "session")), .noise)
        XCTAssertEqual(EventRetention.of(event(.accessDecision, "status")), .noise)
        XCTAssertEqual(EventRetention.of(event(.accessDecision, "unlock")), .critical)
        XCTAssertEqual(EventRetention.of(event(.accessDecision, "message")), .critical, "refusals stay evidence")
        for kind in [EventKind.tamper, .revocation, .enrollment, .share, .actuatorFault] {
            XCTAssertEqual(EventRetention.of(event(kind, "anything")), .critical, "\(kind)")
        }
        XCTAssertEqual(EventRetention.of(event(.storage, "repair permissions")), .ordinary)
        XCTAssertEqual(EventRetention.of(event(.storage, StoreNotice.pruneAction)), .critical)
        XCTAssertEqual(EventRetention.of(event(EventKind(rawValue: "vehicle-state")!, "door")), .ordinary)
    }

    func testPruningTakesPublishedEventsFirstThenNoiseThenOrdinaryAndCriticalLast() throws {
        let store = try openStore(budget: StoreBudget(reserveBytes: 0, pruneBatchRows: 4))
        let space = try XCTUnwrap(store.space)
        // 1-6 published (one of each kind twice), then unpublished, interleaved.
        let pattern: [(EventKind, String)] = [(.accessDecision, "unlock"), (.accessDecision, "session"), (.storage, "repair permissions")]
        for index in 0..<18 { try store.appendEvent(event(pattern[index % 3].0, pattern[index % 3].1)) }
        try store.markEventsPublished(through: 6)
        let lastSeq = try store.lastEventSequence()

        var order = [Int64]()
        var remaining = Set(try store.events().map(\.seq))
        while !remaining.isEmpty {
            _ = try space.prune(store, reason: "test", target: nil, batches: 10, nowMillis: 1)
            let now = Set(try store.events().filter { $0.event.action != StoreNotice.pruneAction }.map(\.seq))
            XCTAssertFalse(now.subtracting(remaining).count > 0)
            order += remaining.subtracting(now).sorted()
            XCTAssertLessThan(now.count, remaining.count, "every call makes progress")
            remaining = now
        }
        // Published first (noise 2, 5; ordinary 3, 6; critical 1, 4), then unpublished by class.
        XCTAssertEqual(order, [2, 5, 3, 6, 1, 4, 8, 11, 14, 17, 9, 12, 15, 18, 7, 10, 13, 16])
        XCTAssertEqual(try store.lastEventSequence(), lastSeq + 1, "only the prune event took a number")
        XCTAssertEqual(try store.read { try $0.eventsPublishedThrough() }, 6, "the published cursor did not move")
        XCTAssertEqual(try store.appendEvent(event(.accessDecision, "lock")).seq, lastSeq + 2, "numbers are never reused")
        XCTAssertEqual(try rawScalar("SELECT COUNT(*) FROM event_prune_permit"), .integer(0), "the permit never outlives a prune")
        XCTAssertThrowsError(try rawSQL("DELETE FROM events WHERE seq = ?1", [.integer(lastSeq + 2)]),
                             "other deletions of unpublished events are still refused")
    }

    func testPruningStartIsOneEventPerIntervalWithTheCountsOfWhatWasPruned() throws {
        let store = try openStore(budget: StoreBudget(reserveBytes: 0, pruneBatchRows: 3, reportIntervalMillis: 60_000))
        let space = try XCTUnwrap(store.space)
        for _ in 0..<12 { try store.appendEvent(event(.accessDecision, "status")) }
        let first = try space.prune(store, reason: "size", target: nil, batches: 1, nowMillis: 1_000)
        guard case .pruningStarted(let reason, _, _, let totals)? = first.first else { return XCTFail("\(first)") }
        XCTAssertEqual(reason, "size")
        XCTAssertEqual(totals, PrunedTotals(noise: 3, unpublished: 3), "the event carries the counts, its own batch included")
        XCTAssertEqual(try space.prune(store, reason: "size", target: nil, batches: 1, nowMillis: 30_000), [], "within the interval")
        XCTAssertEqual(try space.prune(store, reason: "size", target: nil, batches: 1, nowMillis: 50_000), [])
        let later = try space.prune(store, reason: "size", target: nil, batches: 1, nowMillis: 61_000)
        XCTAssertEqual(later.count, 1)
        let reports = try store.events().filter { $0.event.action == StoreNotice.pruneAction }
        XCTAssertEqual(reports.count, 2, "two intervals, two events, however many batches")
        XCTAssertEqual(reports.first?.event.kind, .storage)
        XCTAssertEqual(reports.first?.event.result, "started")
        XCTAssertTrue(reports.last?.event.detailJSON?.contains(#""pruned":{"noise":12,"ordinary":0,"critical":0,"unpublished":12}"#) == true,
                      reports.last?.event.detailJSON ?? "")
        XCTAssertEqual(try store.spaceStatus().pruned.noise, 12)
        XCTAssertEqual(try store.events().filter { $0.event.action == "status" }.count, 0)
    }

    func testAgePruningOnlyWithATrustedClockAndCriticalEventsKeptLonger() throws {
        let day: Int64 = 86_400
        let budget = StoreBudget(reserveBytes: 0, maxEventAgeSeconds: 30 * day, maxCriticalEventAgeSeconds: 365 * day)
        let store = try openStore(budget: budget)
        try store.appendEvent(event(.tamper, "open sealed record", age: 400 * day)) // 1: older than critical age
        var untrusted = event(.accessDecision, "session", age: 300 * day)            // 2: a time nobody vouched for
        untrusted.time = EventTime(seconds: untrusted.time.seconds, trusted: false)
        try store.appendEvent(untrusted)
        try store.appendEvent(event(.accessDecision, "session", age: 40 * day))   // 3: old noise
        try store.appendEvent(event(.accessDecision, "unlock", age: 40 * day))    // 4: old, critical
        try store.appendEvent(event(.storage, "repair permissions", age: 35 * day)) // 5: old ordinary
        try store.appendEvent(event(.accessDecision, "session", age: 1 * day))    // 6: young
        XCTAssertEqual(store.maintainBudget(now: EventTime(seconds: now, trusted: false), nowMillis: 1), [])
        XCTAssertEqual(try store.events().count, 6, "an untrusted clock (a board booted in 1970 or 2099) deletes nothing")
        _ = store.maintainBudget(now: EventTime(seconds: now, trusted: true), nowMillis: 2)
        XCTAssertEqual(try store.events().filter { $0.event.action != StoreNotice.pruneAction }.map(\.seq), [2, 4, 6],
                       "an event without a trusted time has no age; access decisions are kept longer")
        XCTAssertEqual(try store.spaceStatus().pruned, PrunedTotals(noise: 1, ordinary: 1, critical: 1, unpublished: 3))
    }

    func testAFloodOfStatusEventsKeepsTheFileWithinItsBudget() throws {
        let budget = StoreBudget(maxDatabaseBytes: 512 << 10, reserveBytes: 0)
        let store = try openStore(budget: budget)
        var clock: UInt64 = 0
        var slowestRound: UInt64 = 0, slowestCPU: Int64 = 0
        try store.appendEvent(event(.accessDecision, "unlock"))
        for round in 0..<200 {
            try store.write { transaction in
                for _ in 0..<100 { try transaction.appendEvent(self.event(.accessDecision, round % 2 == 0 ? "status" : "session")) }
            }
            if round % 10 == 0 {
                clock += 1000
                let started = SystemClock().nowMillis(), cpuStarted = Self.threadCPUMicros()
                _ = store.maintainBudget(now: EventTime(seconds: now, trusted: true), nowMillis: clock)
                slowestRound = max(slowestRound, SystemClock().nowMillis() - started)
                slowestCPU = max(slowestCPU, Self.threadCPUMicros() - cpuStarted)
            }
            XCTAssertLessThanOrEqual(try store.spaceStatus().fileBytes, budget.maxDatabaseBytes, "round \(round)")
        }
        XCTAssertLessThanOrEqual(fileBytes(layout.databasePath), budget.maxDatabaseBytes + 4096)
        // A figure, not a timed assertion: the longest budget round (at most 8 batches of 256).
        print("store-budget: slowest maintenance round \(slowestRound) ms wall, \(slowestCPU / 1000) ms CPU, over 20,000 noise events, 512 KiB budget")
        XCTAssertEqual(try store.lastEventSequence(), 20_001 + Int64(try store.events(limit: 100_000).filter {
            $0.event.action == StoreNotice.pruneAction }.count))
        XCTAssertEqual(try store.events(limit: 1).first?.event.action, "unlock", "the access decision outlived 20,000 noise events")
        XCTAssertGreaterThan(try store.spaceStatus().pruned.noise, 15_000)
        XCTAssertEqual(try rawScalar("PRAGMA auto_vacuum"), .integer(2), "a new database is created with incremental vacuum")
    }

    func testSecurityWritesCommitWhenTheBudgetIsFullOfWhatCannotBePruned() throws {
        let reserve: Int64 = 1 << 20
        let store = try openStore(budget: StoreBudget(maxDatabaseBytes: 256 << 10, reserveBytes: reserve))
        let reservePath = stateDir + "/reserve"
        XCTAssertGreaterThanOrEqual(fileBytes(reservePath), reserve, "the reserve is allocated at open")
        var info = stat()
        XCTAssertEqual(stat(reservePath, &info), 0)
        XCTAssertGreaterThanOrEqual(Int64(info.st_blocks) * 512, reserve, "with real blocks, not a sparse file")
        // Outbox rows are neither events nor security writes: fill the budget with them.
        func fillWithOutboxRows() {
            for size in [4000, 1000, 200, 40, 1] {
                var full = false
                for index in 0..<2000 where !full {
                    do {
                        try store.write { transaction in
                            _ = try transaction.enqueue(OutboxEntry(topic: "t", payload: Bytes(repeating: 7, count: size), qos: 1,
                                                                    priority: .commandResult, sequence: Int64(index)), budget: nil)
                        }
                    } catch StorageError.sqlite(let error) where error.primaryCode == 13 { // SQLITE_FULL
                        full = true
                    } catch {
                        XCTFail("\(error)")
                    }
                }
                XCTAssertTrue(full, "the page cap stops ordinary writes (\(size) bytes)")
            }
        }
        fillWithOutboxRows()
        // Noise still gets in, by replacing older noise: never by the reserve, never past the cap.
        for _ in 0..<200 { try store.appendEvent(event(.accessDecision, "status")) }
        XCTAssertGreaterThan(try store.spaceStatus().pruned.noise, 0)
        XCTAssertTrue(FileManagerless.exists(reservePath), "noise never releases the reserve")
        XCTAssertLessThanOrEqual(try store.spaceStatus().fileBytes, 256 << 10, "nor goes past the cap")
        // With no event left to prune and the cap reached, noise is refused ...
        while try store.events().isEmpty == false {
            _ = try XCTUnwrap(store.space).prune(store, reason: "test", target: nil, batches: 8, nowMillis: 1)
            if try store.events().allSatisfy({ $0.event.action == StoreNotice.pruneAction }) { break }
        }
        fillWithOutboxRows()
        var large = event(.accessDecision, "status")
        large.detailJSON = "\"" + String(repeating: "x", count: 4000) + "\""
        XCTAssertThrowsError(try store.appendEvent(large), "noise gets neither the reserve nor the room of a critical event")
        XCTAssertTrue(FileManagerless.exists(reservePath))
        // A revocation row and its event, then an access decision: committed over the cap.
        let capBytes = try store.spaceStatus().fileBytes
        try store.write { transaction in
            try transaction.put(Bytes(repeating: 1, count: 4000), kind: .revocation, id: Bytes(repeating: 9, count: 8))
            try transaction.appendEvent(self.event(.revocation, "revoke"))
        }
        try store.appendEvent(event(.accessDecision, "unlock"))
        XCTAssertEqual(try store.events().map(\.event.action).suffix(2), ["revoke", "unlock"])
        let over = try store.spaceStatus().fileBytes - capBytes
        XCTAssertGreaterThan(over, 0, "past the budget ...")
        XCTAssertLessThanOrEqual(over, reserve, "... by at most the reserve")
        XCTAssertTrue(FileManagerless.exists(reservePath), "the disk is not full: the ballast stays")
        XCTAssertThrowsError(try store.appendEvent(large), "and noise still does not get in")
    }

    func testAVersion2DatabaseWithoutAutoVacuumUpgradesAndStopsGrowingByReusingPages() throws {
        // The file as the previous release made it: WAL set first (so auto_vacuum stayed off),
        // schema version 2, events already in the log.
        _ = try layout.prepare()
        let old = try Database(path: layout.databasePath, create: false)
        try old.migrate(to: Schema(applicationID: StoreSchema.applicationID, migrations: Array(StoreSchema.schema.migrations.prefix(2))))
        try old.transaction { connection in
            for _ in 0..<50 { _ = try EventLog.append(self.event(.accessDecision, "unlock"), connection: connection, random: SystemRandom()) }
        }
        XCTAssertEqual(try old.read { try $0.scalar("PRAGMA auto_vacuum") }, .integer(0))

        let budget = StoreBudget(maxDatabaseBytes: 512 << 10, reserveBytes: 0)
        let store = try openStore(budget: budget)
        XCTAssertEqual(try store.database.schemaVersion(), StoreSchema.schema.latestVersion, "upgraded in place")
        XCTAssertEqual(try store.events().count, 50, "nothing lost in the upgrade")
        XCTAssertEqual(try rawScalar("PRAGMA auto_vacuum"), .integer(0), "the mode of an existing file is left alone")
        var clock: UInt64 = 0
        for _ in 0..<150 {
            try store.write { transaction in
                for _ in 0..<100 { try transaction.appendEvent(self.event(.accessDecision, "session")) }
            }
            clock += 1000
            _ = store.maintainBudget(now: EventTime(seconds: now, trusted: true), nowMillis: clock)
        }
        XCTAssertLessThanOrEqual(try store.spaceStatus().fileBytes, budget.maxDatabaseBytes, "freed pages are reused")
        XCTAssertEqual(try store.events().filter { $0.event.action == "unlock" }.count, 50, "the access decisions were kept")
    }

    func testALoweredBudgetIsGivenBackToTheFileSystem() throws {
        var store: CarStore? = try openStore(budget: StoreBudget(maxDatabaseBytes: 2 << 20, reserveBytes: 0))
        for _ in 0..<120 {
            try store?.write { transaction in
                for _ in 0..<100 { try transaction.appendEvent(self.event(.accessDecision, "status")) }
            }
        }
        XCTAssertGreaterThan(try XCTUnwrap(store).spaceStatus().fileBytes, 1 << 20)
        store = nil
        let smaller = StoreBudget(maxDatabaseBytes: 512 << 10, reserveBytes: 0)
        let reopened = try openStore(budget: smaller)
        var vacuumed: Int64 = 0
        for round in 1...20 {
            for notice in reopened.maintainBudget(now: EventTime(seconds: now, trusted: true), nowMillis: UInt64(round) * 1000) {
                if case .vacuumed(let pages) = notice { vacuumed += pages }
            }
        }
        XCTAssertGreaterThan(vacuumed, 0)
        XCTAssertLessThanOrEqual(try reopened.spaceStatus().fileBytes, smaller.maxDatabaseBytes)
        try reopened.database.checkpoint()
        XCTAssertLessThanOrEqual(fileBytes(layout.databasePath), smaller.maxDatabaseBytes, "the file itself shrank")
    }
}

/// `access(2)` without Foundation.
enum FileManagerless {
    static func exists(_ path: String) -> Bool { access(path, F_OK) == 0 }
}

/// The reserve on a genuinely full disk: a tmpfs the test mounts and fills.
final class StorageFullDiskTests: XCTestCase {
    private var disk: SmallDisk?

    override func tearDown() {
        disk?.remove()
        disk = nil
    }

    private func event(_ action: String) -> NewEvent {
        NewEvent(kind: .accessDecision, time: EventTime(seconds: 1_700_000_000, trusted: true), actor: "0a1b2c",
                 action: EventAction(unlisted: action), result: "allowed")
    }

    func testOnAFullDiskTheReserveIsReleasedForSecurityWritesAndStartUpStillWorks() throws {
        if let reason = SmallDisk.unavailableReason { throw XCTSkip(reason) }
        let disk = try SmallDisk(megabytes: 4)
        self.disk = disk
        let stateDir = disk.path + "/state"
        let budget = StoreBudget(maxDatabaseBytes: 1 << 20, reserveBytes: 1 << 20)
        let clock: CarStore.EventClock = { EventTime(seconds: 1_700_000_000, trusted: true) }
        var store: CarStore? = try CarStore.open(stateDirectory: stateDir, clock: clock, budget: budget)
        XCTAssertTrue(FileManagerless.exists(stateDir + "/reserve"))
        for _ in 0..<50 { try store?.appendEvent(event("status")) }
        disk.fill()
        XCTAssertLessThan(disk.freeBytes, 64 << 10, "the disk is full")

        // Revocations need new pages: once the WAL's own room is used, from the released reserve.
        for index in 0..<30 {
            try store?.write { transaction in
                try transaction.put(Bytes(repeating: 1, count: 20_000), kind: .revocation, id: Bytes(repeating: UInt8(index), count: 8))
                try transaction.appendEvent(NewEvent(kind: .revocation, time: EventTime(seconds: 1_700_000_000, trusted: true),
                                                     actor: "0a1b2c", action: EventAction(unlisted: "revoke"), result: "revoked"))
            }
        }
        XCTAssertFalse(FileManagerless.exists(stateDir + "/reserve"), "released for it")
        let notices = store?.maintainBudget(now: EventTime(seconds: 1_700_000_000, trusted: true), nowMillis: 1) ?? []
        XCTAssertTrue(notices.contains { if case .reserveReleased = $0 { return true } else { return false } }, "\(notices)")
        XCTAssertTrue(try store?.spaceStatus().diskFull == true)
        store = nil

        // Restart on the full disk: it opens, the revocation is there, and access decisions commit.
        disk.fill()
        let reopened = try CarStore.open(stateDirectory: stateDir, clock: clock, budget: budget)
        XCTAssertTrue(reopened.startNotices.contains { if case .diskFull = $0 { return true } else { return false } },
                      "\(reopened.startNotices)")
        XCTAssertEqual(try reopened.list(kind: .revocation).records.count, 30)
        for _ in 0..<20 { try reopened.appendEvent(event("unlock")) }
        XCTAssertEqual(try reopened.events(limit: 10_000).filter { $0.event.action == "unlock" }.count, 20)

        // Space comes back: the reserve is allocated again and the disk is no longer full.
        disk.release(bytes: 3 << 20)
        let back = reopened.maintainBudget(now: EventTime(seconds: 1_700_000_000, trusted: true), nowMillis: 2)
        XCTAssertTrue(back.contains(.reserveCreated(bytes: 1 << 20)), "\(back)")
        XCTAssertTrue(FileManagerless.exists(stateDir + "/reserve"))
    }
}

/// With the cloud link routing events: an unpublished event pruned takes its outbox row with
/// it, and the acknowledgements of the others still move the published cursor.
final class StorageBudgetOutboxTests: StorageTestCase {
    func testAPrunedUnpublishedEventLeavesNoOrphanMessageAndTheCursorStillAdvances() throws {
        let store = try CarStore.open(stateDirectory: stateDir, clock: { EventTime(seconds: 1_700_000_000, trusted: true) },
                                      budget: StoreBudget(reserveBytes: 0, pruneBatchRows: 2))
        try store.routeEvents(EventRouterFunction { event in
            OutboxEntry(topic: "vehicles/V/events", payload: Bytes("{\"seq\":\(event.seq)}".utf8), qos: 1,
                        priority: .event, sequence: event.seq, uuid: event.uuid)
        })
        for action in ["session", "session", "unlock", "status"] {
            try store.appendEvent(NewEvent(kind: .accessDecision, time: EventTime(seconds: 1_700_000_000, trusted: true),
                                           actor: "0a1b2c", action: EventAction(unlisted: action), result: "ok"))
        }
        _ = try XCTUnwrap(store.space).prune(store, reason: "test", target: nil, batches: 1, nowMillis: 1)
        // seq 1 and 2 (noise) are gone with their messages; 5 is the prune event itself.
        XCTAssertEqual(try store.events().map(\.seq), [3, 4, 5])
        let outbox = SQLiteOutbox(store: store)
        let pending = try outbox.pending(afterID: 0, limit: 10)
        XCTAssertEqual(pending.map(\.sequence), [3, 4, 5], "no message for an event the car no longer has")
        for message in pending { try outbox.acknowledge(id: message.id) }
        try outbox.flushAcknowledgements()
        XCTAssertEqual(try store.read { try $0.eventsPublishedThrough() }, 5)
    }
}

/// A restarted agent knows no cursor: its first batch must start at the oldest event left,
/// not walk windows over numbers pruned long ago.
final class StorageBudgetRestartTests: StorageTestCase {
    func testAfterARestartPruningStartsAtTheOldestEventLeft() throws {
        let budget = StoreBudget(reserveBytes: 0, pruneBatchRows: 64)
        let time = EventTime(seconds: 1_700_000_000, trusted: true)
        let store = try CarStore.open(stateDirectory: stateDir, clock: { time }, budget: budget)
        try store.write { transaction in
            for _ in 0..<(Int(EventPruner.window) * 3) {
                try transaction.appendEvent(NewEvent(kind: .accessDecision, time: time, action: EventAction(unlisted: "unlock"), result: "ok"))
            }
            try transaction.appendEvent(NewEvent(kind: .accessDecision, time: time, action: EventAction(unlisted: "session"), result: "closed"))
        }
        try store.markEventsPublished(through: EventPruner.window * 3 + 1)
        XCTAssertEqual(try store.trimEvents(keepingLatest: 1), Int(EventPruner.window) * 3)
        let reopened = try CarStore.open(stateDirectory: stateDir, clock: { time }, budget: budget)
        _ = try XCTUnwrap(reopened.space).prune(reopened, reason: "test", target: nil, batches: 1, nowMillis: 1,
                                                 slices: [PruneSlice(retention: .noise, unpublished: false)])
        XCTAssertEqual(try reopened.events().filter { $0.event.action == "session" }, [], "found in the first batch")
    }
}

// The store at a clean stop (CarStore.checkpointAndClose): carkey.db alone is complete, the WAL
// is truncated when a later start on a full disk has the reserve to fall back on, and keeps its
// room when it does not (the disk is full and the reserve already released). Backup and
// restore themselves: StorageBackupRestoreTests; identity loss: StorageIdentityLossTests.
import XCTest
@testable import Drivers
import Protocol
import TestHarness
#if canImport(Glibc)
import Glibc
#endif

final class StoreBackupTests: StorageTestCase {
    private let budget = StoreBudget(maxDatabaseBytes: 1 << 20, reserveBytes: 256 << 10)

    private func fill(_ store: CarStore, events: Int) throws {
        try store.write { transaction in
            for index in 0..<events {
                _ = try transaction.appendEvent(NewEvent(kind: .storage, time: EventTime(seconds: 1_700_000_000, trusted: true),
                                                         action: EventAction(unlisted: "fill \(index)"), result: "ok"))
            }
        }
    }

    private func size(_ path: String) -> Int64? {
        var info = stat()
        return stat(path, &info) == 0 ? Int64(info.st_size) : nil
    }

    func testWithTheReserveInPlaceTheStopTruncatesTheWALAndClosesTheStore() throws {
        let store = try CarStore.open(stateDirectory: stateDir, clock: { EventTime(seconds: 1_700_000_000, trusted: true) }, budget: budget)
        _ = try store.loadOrCreateIdentityKey()
        try fill(store, events: 50)
        XCTAssertGreaterThan(size(layout.databasePath + "-wal") ?? 0, 0, "the commits are in the WAL before the stop")
        let result = try store.checkpointAndClose()
        XCTAssertFalse(result.busy)
        XCTAssertTrue(result.truncated)
        XCTAssertEqual(size(layout.databasePath + "-wal") ?? 0, 0)
        XCTAssertThrowsError(try store.events(), "a closed store refuses further use instead of crashing")
        XCTAssertNoThrow(try store.checkpointAndClose(), "closing twice does nothing")

        // carkey.db alone (no WAL beside it) holds the identity and every event.
        let copy = root + "/copy.db"
        try Files.writeAtomically(try Files.read(layout.databasePath, limit: 64 << 20), to: copy)
        let database = try Database(path: copy, create: false)
        XCTAssertEqual(try database.read { try $0.scalar("SELECT count(*) FROM events WHERE action LIKE 'fill %'") }, .integer(50))
        XCTAssertEqual(try database.read { try $0.scalar("SELECT count(*) FROM sealed_records WHERE kind = 'identity'") }, .integer(1))
    }

    func testOnAFullDiskWithoutAReserveTheStopKeepsTheWALRoomForTheNextStart() throws {
        if let reason = SmallDisk.unavailableReason { throw XCTSkip(reason) }
        let disk = try SmallDisk(megabytes: 4)
        defer { disk.remove() }
        let state = disk.path + "/state"
        let clock: CarStore.EventClock = { EventTime(seconds: 1_700_000_000, trusted: true) }
        // First run: reserve created, then the disk fills; the next start releases the reserve.
        var store = try CarStore.open(stateDirectory: state, clock: clock, budget: budget)
        _ = try store.loadOrCreateIdentityKey()
        try fill(store, events: 50)
        try store.checkpointAndClose()
        disk.fill()
        store = try CarStore.open(stateDirectory: state, clock: clock, budget: budget)
        XCTAssertTrue(try store.spaceStatus().diskFull)
        XCTAssertFalse(try store.spaceStatus().reservePresent, "released at start-up on the full disk")
        try fill(store, events: 20)
        let walBefore = size(state + "/carkey.db-wal") ?? 0
        XCTAssertGreaterThan(walBefore, 0)
        let result = try store.checkpointAndClose()
        XCTAssertFalse(result.truncated, "no reserve is left: the WAL's room is all a restart has")
        XCTAssertEqual(size(state + "/carkey.db-wal"), walBefore)
        XCTAssertEqual(result.walFrames, result.checkpointedFrames, "every frame is in carkey.db all the same")

        // The next start on the still full disk commits into that room.
        disk.fill()
        store = try CarStore.open(stateDirectory: state, clock: clock, budget: budget)
        XCTAssertNoThrow(try fill(store, events: 1), "an access decision on the full disk after a restart is recorded")
        try store.checkpointAndClose()
    }
}

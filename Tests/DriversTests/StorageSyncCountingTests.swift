// The sync-counting VFS under every database: it is SQLite's default, a committed write
// transaction costs exactly the syncs WAL with synchronous=FULL promises (and nothing else
// does), and the benchmark delay really sits in every sync.
import XCTest
@testable import Drivers
import CSQLite
import Protocol
#if canImport(Glibc)
import Glibc
#endif

final class StorageSyncCountingTests: StorageTestCase {
    private func makeDatabase() throws -> Database {
        try Files.ensureDirectory(stateDir)
        let database = try Database(path: stateDir + "/syncs.db", create: true)
        try database.transaction { try $0.execute("CREATE TABLE t (n INTEGER PRIMARY KEY, v BLOB)") }
        // The first commits after opening write the WAL header; measure from a steady state.
        try database.transaction { try $0.run("INSERT INTO t (v) VALUES (?1)", [.blob(Bytes(repeating: 1, count: 100))]) }
        return database
    }

    func testTheCountingVFSIsTheDefault() throws {
        _ = try makeDatabase()
        XCTAssertTrue(StorageSyncs.install())
        let name = sqlite3_vfs_find(nil).map { String(cString: $0.pointee.zName) }
        XCTAssertEqual(name, "ock-sync-counting")
    }

    /// WAL with synchronous=FULL: a commit appends its pages to the WAL and syncs the WAL once;
    /// the main file is only synced by checkpoints. Reads and rollbacks sync nothing.
    func testACommittedWriteCostsOneWALSync() throws {
        let database = try makeDatabase()
        for round in 0..<5 {
            let before = StorageSyncs.counters
            try database.transaction { try $0.run("INSERT INTO t (v) VALUES (?1)", [.blob(Bytes(repeating: UInt8(round), count: 100))]) }
            let cost = StorageSyncs.counters.since(before)
            XCTAssertEqual(cost.syncs, 1, "round \(round)")
            XCTAssertEqual(cost.walSyncs, 1, "round \(round)")
            // At least one page frame (24-byte header + 4096-byte page) went to the WAL.
            XCTAssertGreaterThanOrEqual(cost.bytesWritten, 4096 + 24)
        }
        let before = StorageSyncs.counters
        _ = try database.read { try $0.rows("SELECT n FROM t") }
        struct Abandon: Error {}
        XCTAssertThrowsError(try database.transaction { connection in
            try connection.run("INSERT INTO t (v) VALUES (x'00')")
            throw Abandon()
        })
        XCTAssertEqual(StorageSyncs.counters.since(before).syncs, 0, "a read and a rollback are not durable writes")
    }

    /// Three transactions cost three syncs; the same rows in one transaction cost one (what
    /// group commit buys).
    func testSyncsCountCommitsNotRows() throws {
        let database = try makeDatabase()
        var before = StorageSyncs.counters
        for _ in 0..<3 { try database.transaction { try $0.run("INSERT INTO t (v) VALUES (x'01')") } }
        XCTAssertEqual(StorageSyncs.counters.since(before).syncs, 3)
        before = StorageSyncs.counters
        try database.transaction { connection in
            for _ in 0..<3 { try connection.run("INSERT INTO t (v) VALUES (x'01')") }
        }
        XCTAssertEqual(StorageSyncs.counters.since(before).syncs, 1)
    }

    func testTheBenchmarkDelaySitsInEverySync() throws {
        let database = try makeDatabase()
        StorageSyncs.addedSyncDelayMicros = 20_000
        defer { StorageSyncs.addedSyncDelayMicros = 0 }
        XCTAssertEqual(StorageSyncs.addedSyncDelayMicros, 20_000)
        let before = StorageSyncs.counters
        var start = timespec(), end = timespec()
        clock_gettime(CLOCK_MONOTONIC, &start)
        for _ in 0..<2 { try database.transaction { try $0.run("INSERT INTO t (v) VALUES (x'02')") } }
        clock_gettime(CLOCK_MONOTONIC, &end)
        let cost = StorageSyncs.counters.since(before)
        let elapsedMicros = (end.tv_sec - start.tv_sec) * 1_000_000 + (end.tv_nsec - start.tv_nsec) / 1000
        // Lower bounds only: a sleep never ends early; nothing here asserts a speed.
        XCTAssertEqual(cost.syncs, 2)
        XCTAssertGreaterThanOrEqual(elapsedMicros, 40_000, "two commits, two delayed syncs")
        XCTAssertGreaterThanOrEqual(cost.syncNanos, 40_000_000, "the delay is counted as sync time")
        XCTAssertGreaterThanOrEqual(cost.meanSyncMicros, 20_000)
        // Off again: a commit no longer waits the delay (the counter still counts it).
        StorageSyncs.addedSyncDelayMicros = 0
        let after = StorageSyncs.counters
        try database.transaction { try $0.run("INSERT INTO t (v) VALUES (x'03')") }
        XCTAssertEqual(StorageSyncs.counters.since(after).syncs, 1)
    }
}

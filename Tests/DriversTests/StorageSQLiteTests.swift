// The thin SQLite wrapper: PRAGMAs, typed binds, transactions and errors.
import XCTest
@testable import Drivers
import CSQLite
import Dispatch
import Protocol

final class StorageSQLiteTests: StorageTestCase {
    private func makeDatabase() throws -> Database {
        try Files.ensureDirectory(stateDir)
        return try Database(path: stateDir + "/plain.db", create: true)
    }

    func testOpenAppliesDurabilityPragmas() throws {
        let database = try makeDatabase()
        try database.withoutTransaction { connection in
            XCTAssertEqual(try connection.scalar("PRAGMA journal_mode"), .text("wal"))
            XCTAssertEqual(try connection.scalar("PRAGMA synchronous"), .integer(2), "FULL")
            XCTAssertEqual(try connection.scalar("PRAGMA foreign_keys"), .integer(1))
            XCTAssertEqual(try connection.scalar("PRAGMA trusted_schema"), .integer(0))
            XCTAssertEqual(try connection.scalar("PRAGMA busy_timeout"), .integer(Int64(Database.defaultBusyTimeoutMillis)))
        }
    }

    /// The page cache is bounded by us, not left at SQLite's 2000 KiB default per connection:
    /// docs/operations.md states what the agent holds at steady state from these numbers.
    func testBothConnectionsHaveTheStatedPageCacheBound() throws {
        let database = try makeDatabase()
        try database.withoutTransaction { connection in
            XCTAssertEqual(try connection.scalar("PRAGMA cache_size"), .integer(-Int64(Database.writerCacheKiB)))
        }
        try database.read { connection in
            XCTAssertEqual(try connection.scalar("PRAGMA cache_size"), .integer(-Int64(Database.readerCacheKiB)))
        }
        XCTAssertLessThan(Database.writerCacheKiB + Database.readerCacheKiB, 2 * 2000, "below SQLite's default for two connections")
    }

    func testOpeningAMissingFileWithoutCreateFails() {
        XCTAssertThrowsError(try Database(path: root + "/absent.db", create: false)) { error in
            XCTAssertEqual((error as? SQLiteError)?.primaryCode, SQLITE_CANTOPEN)
        }
    }

    func testTypedBindsRoundTrip() throws {
        let database = try makeDatabase()
        let values: [SQLiteValue] = [.null, .integer(.min), .integer(.max), .text(""), .text("Schlüssel 🔑"),
                                     .blob([]), .blob([0, 255, 0, 1])]
        let rows = try database.transaction { connection -> [[SQLiteValue]] in
            try connection.execute("CREATE TABLE t (n INTEGER PRIMARY KEY, v)")
            for (index, value) in values.enumerated() {
                try connection.run("INSERT INTO t (n, v) VALUES (?1, ?2)", [.integer(Int64(index)), value])
            }
            return try connection.rows("SELECT v, typeof(v) FROM t ORDER BY n")
        }
        XCTAssertEqual(rows.map { $0[0] }, values, "empty text and blob stay text and blob, not NULL")
        XCTAssertEqual(rows.map { $0[1] }, ["null", "integer", "integer", "text", "text", "blob", "blob"].map { .text($0) })
    }

    func testTransactionCommitsAndRollsBackOnAnyError() throws {
        struct Boom: Error {}
        let database = try makeDatabase()
        try database.transaction { try $0.execute("CREATE TABLE t (v INTEGER)") }
        try database.transaction { try $0.run("INSERT INTO t VALUES (1)") }
        XCTAssertThrowsError(try database.transaction { connection in
            try connection.run("INSERT INTO t VALUES (2)")
            throw Boom()
        }) { XCTAssertTrue($0 is Boom, "the body's own error comes back") }
        XCTAssertThrowsError(try database.transaction { connection in
            try connection.run("INSERT INTO t VALUES (3)")
            try connection.run("INSERT INTO nowhere VALUES (4)")
        })
        XCTAssertEqual(try database.read { try $0.rows("SELECT v FROM t") }, [[.integer(1)]])
        // The connection is usable again after a rollback.
        try database.transaction { try $0.run("INSERT INTO t VALUES (5)") }
        XCTAssertEqual(try database.read { try $0.scalar("SELECT count(*) FROM t") }, .integer(2))
    }

    func testNestedTransactionIsAnErrorNotADeadlock() throws {
        let database = try makeDatabase()
        XCTAssertThrowsError(try database.transaction { _ in try database.read { _ in 1 } }) { error in
            XCTAssertEqual((error as? SQLiteError)?.primaryCode, SQLITE_MISUSE)
        }
        XCTAssertEqual(try database.read { try $0.scalar("SELECT 7") }, .integer(7), "the lock was released")
    }

    func testErrorsCarryCodeAndMessageButNoBoundValues() throws {
        let database = try makeDatabase()
        try database.transaction { try $0.execute("CREATE TABLE t (v TEXT UNIQUE)") }
        let secret = "correct-horse-battery-staple"
        try database.transaction { try $0.run("INSERT INTO t VALUES (?1)", [.text(secret)]) }
        XCTAssertThrowsError(try database.transaction { try $0.run("INSERT INTO t VALUES (?1)", [.text(secret)]) }) { error in
            guard let error = error as? SQLiteError else { return XCTFail("\(error)") }
            XCTAssertEqual(error.code, SQLITE_CONSTRAINT | (8 << 8), "SQLITE_CONSTRAINT_UNIQUE")
            XCTAssertTrue(error.message.contains("UNIQUE"), error.message)
            XCTAssertFalse(error.description.contains(secret), error.description)
        }
    }

    func testConcurrentWritersAreSerialised() throws {
        let database = try makeDatabase()
        try database.transaction { try $0.execute("CREATE TABLE t (v INTEGER)") }
        DispatchQueue.concurrentPerform(iterations: 8) { worker in
            for index in 0..<25 {
                do {
                    let (before, after) = try database.transaction { connection in
                        let before = try connection.scalar("SELECT count(*) FROM t")
                        try connection.run("INSERT INTO t VALUES (?1)", [.integer(Int64(worker * 100 + index))])
                        return (before, try connection.scalar("SELECT count(*) FROM t"))
                    }
                    if case .integer(let count)? = before { XCTAssertEqual(after, .integer(count + 1)) }
                } catch {
                    XCTFail("\(error)")
                }
            }
        }
        XCTAssertEqual(try database.read { try $0.scalar("SELECT count(*) FROM t") }, .integer(200))
    }
}

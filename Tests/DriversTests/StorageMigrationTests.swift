// Schema versioning: fresh files, re-opens, upgrades, and refusals.
import XCTest
@testable import Drivers
import Protocol

final class StorageMigrationTests: StorageTestCase {
    private struct Refused: Error {}

    private func makeDatabase() throws -> Database {
        try Files.ensureDirectory(stateDir)
        return try Database(path: stateDir + "/plain.db", create: true)
    }

    private func step(_ name: String) -> Migration {
        Migration(name) { connection in
            try connection.execute("CREATE TABLE IF NOT EXISTS applied (name TEXT)")
            try connection.run("INSERT INTO applied VALUES (?1)", [.text(name)])
        }
    }

    private func applied(_ database: Database) throws -> [SQLiteValue] {
        try database.read { try $0.rows("SELECT name FROM applied ORDER BY rowid").map { $0[0] } }
    }

    func testFreshStoreIsAtTheLatestVersionAndMarkedAsOurs() throws {
        _ = try openStore()
        XCTAssertEqual(try rawScalar("PRAGMA user_version"), .integer(Int64(StoreSchema.schema.latestVersion)))
        XCTAssertEqual(try rawScalar("PRAGMA application_id"), .integer(Int64(StoreSchema.applicationID)))
    }

    func testEachMigrationRunsOnceAcrossReopensAndUpgrades() throws {
        let database = try makeDatabase()
        let v1 = Schema(applicationID: 42, migrations: [step("one")])
        XCTAssertEqual(try database.migrate(to: v1), 0, "found an empty file")
        XCTAssertEqual(try database.migrate(to: v1), 1, "re-open: nothing to do")
        let v3 = Schema(applicationID: 42, migrations: [step("one"), step("two"), step("three")])
        XCTAssertEqual(try database.migrate(to: v3), 1)
        XCTAssertEqual(try applied(database), [.text("one"), .text("two"), .text("three")])
        XCTAssertEqual(try database.schemaVersion(), 3)
    }

    func testAFailingMigrationLeavesThePreviousVersion() throws {
        let database = try makeDatabase()
        let broken = Schema(applicationID: 42, migrations: [
            step("one"),
            Migration("two") { connection in
                try connection.execute("CREATE TABLE half_done (v INTEGER)")
                throw Refused()
            },
        ])
        XCTAssertThrowsError(try database.migrate(to: broken)) { XCTAssertTrue($0 is Refused) }
        XCTAssertEqual(try database.schemaVersion(), 1)
        XCTAssertEqual(try database.read { try $0.scalar("SELECT count(*) FROM sqlite_master WHERE name = 'half_done'") }, .integer(0))
    }

    func testADatabaseNewerThanTheCodeIsRefusedAndLeftAlone() throws {
        _ = try openStore()
        let newer = Int64(StoreSchema.schema.latestVersion) + 1
        try rawSQL("PRAGMA user_version = \(newer)")
        XCTAssertThrowsError(try openStore()) { error in
            XCTAssertEqual(error as? StorageError,
                           .migration(.databaseNewerThanCode(found: Int32(newer), supported: StoreSchema.schema.latestVersion)))
        }
        XCTAssertEqual(try rawScalar("PRAGMA user_version"), .integer(newer), "never downgraded")
    }

    func testAForeignDatabaseIsRefused() throws {
        // Tables but no version: someone else's file.
        let database = try makeDatabase()
        try database.transaction { try $0.execute("CREATE TABLE theirs (v INTEGER)") }
        XCTAssertThrowsError(try database.migrate(to: Schema(applicationID: 42, migrations: [step("one")]))) { error in
            XCTAssertEqual(error as? MigrationError, .foreignDatabase(applicationID: 0))
        }
        // A versioned file with another application ID.
        _ = try openStore()
        try rawSQL("PRAGMA application_id = 7")
        XCTAssertThrowsError(try openStore()) { XCTAssertEqual($0 as? StorageError, .migration(.foreignDatabase(applicationID: 7))) }
    }

    func testGarbageInsteadOfADatabaseIsATypedError() throws {
        try Files.ensureDirectory(stateDir)
        try Files.writeAtomically(Array(repeating: 0x41, count: 4096), to: layout.databasePath)
        XCTAssertThrowsError(try openStore()) { error in
            XCTAssertEqual((error as? StorageError)?.sqliteError?.isCorrupt, true, "\(error)")
        }
    }
}

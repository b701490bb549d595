// The public storage API throws one type, StorageError: causes from the layers below (SQLite,
// migrations, the system) arrive wrapped in their own case, their messages unchanged.
import XCTest
@testable import Drivers
import TestHarness
import Protocol
import CSQLite
#if canImport(Glibc)
import Glibc
#endif

final class StorageTypedErrorTests: StorageTestCase {
    func testAStoreInAnUnwritableDirectoryIsASystemError() throws {
        guard geteuid() != 0 else { throw XCTSkip("root writes into a 0500 directory anyway") }
        let parent = root + "/locked"
        XCTAssertEqual(mkdir(parent, 0o500), 0)
        defer { chmod(parent, 0o700) }
        do {
            _ = try CarStore.open(stateDirectory: parent + "/state")
            XCTFail("a store was opened under a directory nobody may write")
        } catch {
            // `error` is a StorageError: CarStore.open throws nothing else.
            guard case .system(let errno) = error else { return XCTFail("\(error)") }
            XCTAssertEqual(errno.rawValue, EACCES, "\(error)")
            XCTAssertEqual(error.description, errno.description, "the message is the system error's own")
        }
    }

    /// The same path as root (who writes into a 0500 directory anyway): a parent that is a file.
    func testAStoreUnderARegularFileIsASystemError() throws {
        try Files.writeAtomically([1], to: root + "/file")
        do {
            _ = try CarStore.open(stateDirectory: root + "/file/state")
            XCTFail("a store was opened under a regular file")
        } catch {
            guard case .system(let errno) = error else { return XCTFail("\(error)") }
            XCTAssertEqual(errno.rawValue, ENOTDIR, "\(error)")
            XCTAssertEqual(error.description, errno.description, "the message is the system error's own")
        }
    }

    func testAFileThatIsNotADatabaseIsAWrappedSQLiteError() throws {
        try Files.ensureDirectory(stateDir)
        try Files.writeAtomically(Array(repeating: 0x41, count: 4096), to: layout.databasePath)
        do {
            _ = try openStore()
            XCTFail("garbage opened as a store")
        } catch let error as StorageError {
            guard let cause = error.sqliteError else { return XCTFail("\(error)") }
            XCTAssertTrue(cause.isCorrupt, "\(cause)")
            XCTAssertEqual(error.description, cause.description, "the message is SQLite's, as before")
        }
    }

    func testASchemaNewerThanTheCodeIsAWrappedMigrationError() throws {
        _ = try openStore()
        try rawSQL("PRAGMA user_version = 999")
        do {
            _ = try CarStore.open(stateDirectory: stateDir)
            XCTFail("a newer store was opened")
        } catch {
            XCTAssertEqual(error, .migration(.databaseNewerThanCode(found: 999, supported: StoreSchema.schema.latestVersion)))
            XCTAssertEqual(error.description, "database schema version 999 is newer than this program supports "
                           + "(\(StoreSchema.schema.latestVersion)); refusing to run")
        }
    }

    func testABackupOfNothingIsAWrappedBackupError() {
        do {
            _ = try StoreBackup.write(stateDirectory: root + "/nothing", to: root + "/backup.db")
            XCTFail("a backup of nothing was written")
        } catch {
            XCTAssertEqual(error, .backup(.noStore(directory: root + "/nothing")))
            XCTAssertEqual(error.description, "no car store in \(root)/nothing (carkey.db not found)")
        }
    }

    func testAnOutboxQoSOutsideZeroToTwoIsRefused() throws {
        let store = try openStore()
        XCTAssertThrowsError(try store.write { transaction in
            try transaction.enqueue(OutboxEntry(topic: "vehicles/V/events", payload: [1], qos: 3, priority: .event))
        }) { error in
            XCTAssertEqual(error as? StorageError, .invalidArgument("outbox QoS 3 (expected 0, 1 or 2)"))
        }
        XCTAssertEqual(try store.read { try $0.outboxDepth() }, 0)
    }
}

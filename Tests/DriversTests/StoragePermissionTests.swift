// The state directory layout and its permissions, enforced on every open.
import XCTest
@testable import Drivers
import Protocol
#if canImport(Glibc)
import Glibc
#endif

final class StoragePermissionTests: StorageTestCase {
    func testFreshStateDirectoryIsPrivateWhateverTheUmask() throws {
        let old = umask(0)
        defer { umask(old) }
        let store = try openStore()
        try store.appendEvent(accessEvent("unlock")) // a write, so the WAL exists
        XCTAssertEqual(try mode(stateDir), 0o700)
        XCTAssertEqual(try mode(layout.databasePath), 0o600)
        XCTAssertEqual(try mode(layout.storageKeyPath), 0o600)
        XCTAssertEqual(try mode(layout.databasePath + "-wal"), 0o600)
        XCTAssertEqual(try mode(layout.databasePath + "-shm"), 0o600)
        XCTAssertEqual(try Files.read(layout.storageKeyPath).count, 32)
        XCTAssertEqual(store.repairs, [])
    }

    func testLooseDirectoryAndDatabaseModesAreRepairedAndLogged() throws {
        _ = try openStore()
        XCTAssertEqual(chmod(stateDir, 0o755), 0)
        XCTAssertEqual(chmod(layout.databasePath, 0o644), 0)
        let store = try openStore()
        XCTAssertEqual(try mode(stateDir), 0o700)
        XCTAssertEqual(try mode(layout.databasePath), 0o600)
        XCTAssertEqual(store.repairs, [PermissionRepair(path: stateDir, oldMode: 0o755, newMode: 0o700),
                                       PermissionRepair(path: layout.databasePath, oldMode: 0o644, newMode: 0o600)])
        let logged = try store.events().filter { $0.event.kind == .storage }
        XCTAssertEqual(logged.count, 2)
        XCTAssertEqual(logged.first?.event.action, "repair permissions")
        XCTAssertTrue(logged.first?.event.detailJSON?.contains("\"from\":\"755\"") == true, "\(logged)")
    }

    func testAReadableKeyFileIsRefusedNotRepaired() throws {
        _ = try openStore()
        XCTAssertEqual(chmod(layout.storageKeyPath, 0o644), 0)
        XCTAssertThrowsError(try openStore()) { error in
            XCTAssertEqual(error as? StorageError, .insecurePermissions(path: self.layout.storageKeyPath, mode: 0o644))
        }
        XCTAssertEqual(try mode(layout.storageKeyPath), 0o644, "left for an operator to judge")
    }

    func testAKeyFileOfTheWrongSizeIsRefused() throws {
        _ = try openStore()
        for length in [0, 31, 33] {
            unlink(layout.storageKeyPath)
            try Files.writeAtomically(Array(repeating: 7, count: length), to: layout.storageKeyPath, mode: 0o600)
            XCTAssertThrowsError(try openStore()) { error in
                XCTAssertEqual(error as? StorageError, .invalidStorageKey(path: self.layout.storageKeyPath, length: length))
            }
        }
    }

    func testSymlinksInPlaceOfStateFilesAreRefused() throws {
        _ = try openStore()
        let elsewhere = root + "/elsewhere.key"
        try Files.writeAtomically(Array(repeating: 1, count: 32), to: elsewhere, mode: 0o600)
        unlink(layout.storageKeyPath)
        XCTAssertEqual(symlink(elsewhere, layout.storageKeyPath), 0)
        XCTAssertThrowsError(try openStore()) { error in
            XCTAssertEqual(error as? StorageError, .notARegularFile(path: self.layout.storageKeyPath))
        }

        let databaseElsewhere = root + "/elsewhere.db"
        XCTAssertEqual(rename(layout.databasePath, databaseElsewhere), 0)
        XCTAssertEqual(symlink(databaseElsewhere, layout.databasePath), 0)
        XCTAssertThrowsError(try openStore()) { error in
            XCTAssertEqual(error as? StorageError, .notARegularFile(path: self.layout.databasePath))
        }
    }

    func testAStatePathThatIsAFileIsRefused() throws {
        try Files.writeAtomically([1], to: stateDir)
        XCTAssertThrowsError(try openStore()) { XCTAssertEqual($0 as? StorageError, .notADirectory(path: self.stateDir)) }
    }

    func testStateOwnedByAnotherUserIsRefused() throws {
        try XCTSkipUnless(geteuid() == 0, "needs root to chown")
        _ = try openStore()
        XCTAssertEqual(chown(stateDir, 4242, 4242), 0)
        XCTAssertThrowsError(try openStore()) { XCTAssertEqual($0 as? StorageError, .ownedByAnotherUser(path: self.stateDir, owner: 4242)) }
        XCTAssertEqual(chown(stateDir, 0, 0), 0)
        XCTAssertEqual(chown(layout.databasePath, 4242, 4242), 0)
        XCTAssertThrowsError(try openStore()) {
            XCTAssertEqual($0 as? StorageError, .ownedByAnotherUser(path: self.layout.databasePath, owner: 4242))
        }
        XCTAssertEqual(chown(layout.databasePath, 0, 0), 0)
        XCTAssertEqual(chown(layout.storageKeyPath, 4242, 4242), 0)
        XCTAssertThrowsError(try openStore()) {
            XCTAssertEqual($0 as? StorageError, .ownedByAnotherUser(path: self.layout.storageKeyPath, owner: 4242))
        }
    }

    func testAMissingKeyIsNotReplacedWhileSealedRecordsExist() throws {
        let store = try openStore()
        try store.put([1, 2, 3], kind: .key, id: [0xaa])
        unlink(layout.storageKeyPath)
        XCTAssertThrowsError(try openStore()) { XCTAssertEqual($0 as? StorageError, .storageKeyMissing(path: self.layout.storageKeyPath)) }
        XCTAssertEqual(access(layout.storageKeyPath, F_OK), -1, "no new key was minted")
    }

    func testTheKeyFileIsCreatedOnceAndReused() throws {
        _ = try openStore()
        let first = try Files.read(layout.storageKeyPath)
        _ = try openStore()
        XCTAssertEqual(try Files.read(layout.storageKeyPath), first)
        XCTAssertNotEqual(first, Array(repeating: 0, count: 32))
    }

    func testErrorsNeverShowTheKey() throws {
        _ = try openStore()
        let key = try Files.read(layout.storageKeyPath)
        XCTAssertEqual(chmod(layout.storageKeyPath, 0o640), 0)
        XCTAssertThrowsError(try openStore()) { error in
            XCTAssertFalse("\(error)".contains(key.hexString))
        }
    }
}

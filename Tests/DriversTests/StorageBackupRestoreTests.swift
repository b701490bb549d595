// StoreBackup and StoreRestore on real files: a backup is one consistent, self-contained,
// checked 0600 file, also while another connection keeps committing; a restore checks the
// file against the state directory's storage key, keeps the old store aside and switches in
// one rename; the clean-stop checkpoint leaves carkey.db whole.
import XCTest
@testable import Drivers
import Protocol
import Synchronization
#if canImport(Glibc)
import Glibc
#endif

final class StorageBackupRestoreTests: StorageTestCase {
    private var backupPath: String { root + "/backup.db" }

    /// A store with an identity, two keys and `events` events.
    private func populatedStore(events: Int = 10) throws -> CarStore {
        let store = try openStore()
        _ = try store.loadOrCreateIdentityKey()
        try store.put(Bytes(repeating: 1, count: 65), kind: .key, id: [1])
        try store.put(Bytes(repeating: 2, count: 65), kind: .key, id: [2])
        for index in 0..<events { try store.appendEvent(accessEvent("unlock \(index)")) }
        return store
    }

    func testABackupIsOneCheckedFileWithEveryCommitStillInTheWAL() throws {
        let store = try populatedStore()
        // Everything is still in carkey.db-wal (the store keeps it between runs).
        XCTAssertGreaterThan(try Files.mode(of: layout.databasePath + "-wal"), 0)
        let summary = try StoreBackup.write(stateDirectory: stateDir, to: backupPath)
        XCTAssertEqual(summary.keys, 2)
        XCTAssertEqual(summary.events, 10)
        XCTAssertEqual(summary.identity, KeyID(publicKey: try store.loadOrCreateIdentityKey().publicKey))
        XCTAssertEqual(try mode(backupPath), 0o600)
        XCTAssertEqual(access(backupPath + "-wal", F_OK), -1, "the backup needs no WAL beside it")
        let copy = try Connection(path: backupPath, create: false)
        XCTAssertEqual(try copy.scalar("PRAGMA journal_mode"), .text("delete"))
        XCTAssertEqual(try copy.scalar("SELECT COUNT(*) FROM events"), .integer(10))
        XCTAssertEqual(try copy.scalar("PRAGMA integrity_check"), .text("ok"))
        XCTAssertEqual(access(backupPath + ".tmp-\(getpid())", F_OK), -1, "no staging file left")
    }

    func testBackupsTakenWhileAnotherConnectionCommitsAreConsistentSnapshots() throws {
        let store = try populatedStore(events: 0)
        let stop = StopFlag()
        let event = accessEvent("lock")
        let writer = Thread {
            // Each commit moves the event counter and adds its row together: a torn copy would
            // show one without the other.
            while !stop.isSet { _ = try? store.appendEvent(event) }
        }
        writer.start()
        defer { stop.set(); writer.join() }
        for round in 0..<5 {
            let file = root + "/backup-\(round).db"
            _ = try StoreBackup.write(stateDirectory: stateDir, to: file)
            let copy = try Connection(path: file, create: false)
            XCTAssertEqual(try copy.scalar("PRAGMA integrity_check"), .text("ok"))
            let counter = try copy.scalar("SELECT value FROM counters WHERE name = 'event_seq'")
            let rows = try copy.scalar("SELECT COUNT(*) FROM events")
            XCTAssertEqual(counter, rows, "round \(round): the counter and the rows come from one snapshot")
        }
    }

    func testABackupIsNotWrittenIntoTheStateDirectory() throws {
        _ = try populatedStore()
        XCTAssertThrowsError(try StoreBackup.write(stateDirectory: stateDir, to: stateDir + "/carkey.db")) {
            guard case StorageError.backup(.outputInsideStateDirectory) = $0 else { return XCTFail("\($0)") }
        }
        XCTAssertThrowsError(try StoreBackup.write(stateDirectory: root + "/nothing", to: backupPath)) {
            XCTAssertEqual($0 as? StorageError, .backup(.noStore(directory: root + "/nothing")))
        }
    }

    func testRestoreKeepsThePreviousStoreAsideAndSwitchesInOneRename() throws {
        let store = try populatedStore(events: 3)
        _ = try StoreBackup.write(stateDirectory: stateDir, to: backupPath)
        for index in 0..<5 { try store.appendEvent(accessEvent("after backup \(index)")) }
        try store.database.checkpointAndClose()

        let outcome = try StoreRestore.restore(stateDirectory: stateDir, from: backupPath)
        XCTAssertEqual(outcome.previousStore, stateDir + "/carkey.db.before-restore")
        XCTAssertEqual(outcome.summary.events, 3)
        XCTAssertEqual(try mode(layout.databasePath), 0o600)
        XCTAssertEqual(access(stateDir + "/carkey.db.restoring", F_OK), -1)
        let restored = try openStore()
        XCTAssertEqual(try restored.lastEventSequence(), 3)
        XCTAssertEqual(try restored.read { try $0.list(kind: .key) }.records.count, 2)
        let aside = try Connection(path: stateDir + "/carkey.db.before-restore", create: false)
        XCTAssertEqual(try aside.scalar("SELECT COUNT(*) FROM events"), .integer(8), "the replaced store is whole")
        try restored.database.checkpointAndClose()

        // A second restore does not overwrite the first one's saved store.
        XCTAssertEqual(try StoreRestore.restore(stateDirectory: stateDir, from: backupPath).previousStore,
                       stateDir + "/carkey.db.before-restore.1")
    }

    func testRestoreRefusesAStoreSealedWithAnotherKey() throws {
        _ = try populatedStore()
        _ = try StoreBackup.write(stateDirectory: stateDir, to: backupPath)
        // Another car: its own state directory and storage key.
        let otherDir = root + "/other"
        let other = try CarStore.open(stateDirectory: otherDir)
        _ = try other.loadOrCreateIdentityKey()
        try other.database.checkpointAndClose()
        let before = try Files.read(otherDir + "/carkey.db", limit: 1 << 24)
        XCTAssertThrowsError(try StoreRestore.restore(stateDirectory: otherDir, from: backupPath)) { error in
            guard case StorageError.backup(.identityDoesNotOpen(_, let keyPath)) = error else { return XCTFail("\(error)") }
            XCTAssertEqual(keyPath, otherDir + "/storage.key")
            XCTAssertTrue("\(error)".contains("storage key"), "\(error)")
        }
        XCTAssertEqual(try Files.read(otherDir + "/carkey.db", limit: 1 << 24), before)
        XCTAssertEqual(access(otherDir + "/carkey.db.before-restore", F_OK), -1)
        XCTAssertEqual(access(otherDir + "/carkey.db.restoring", F_OK), -1)
    }

    func testRestoreWithoutAStorageKeySaysToRestoreBothTogether() throws {
        _ = try populatedStore()
        _ = try StoreBackup.write(stateDirectory: stateDir, to: backupPath)
        let emptyDir = root + "/empty"
        XCTAssertEqual(mkdir(emptyDir, 0o700), 0)
        XCTAssertThrowsError(try StoreRestore.restore(stateDirectory: emptyDir, from: backupPath)) {
            XCTAssertEqual($0 as? StorageError, .backup(.storageKeyMissing(storageKeyPath: emptyDir + "/storage.key")))
            XCTAssertTrue("\($0)".contains("together"))
        }
        // With the key put back first, the same backup restores into the empty directory.
        try Files.writeAtomically(try Files.read(layout.storageKeyPath), to: emptyDir + "/storage.key", mode: 0o600)
        let outcome = try StoreRestore.restore(stateDirectory: emptyDir, from: backupPath)
        XCTAssertNil(outcome.previousStore)
        XCTAssertEqual(try CarStore.open(stateDirectory: emptyDir).loadOrCreateIdentityKey().publicKey,
                       try openStore().loadOrCreateIdentityKey().publicKey)
    }

    func testRestoreRefusesACopyWithItsWALLeftBehind() throws {
        _ = try populatedStore()
        // "Copy carkey.db" of a running store: the commits are in the -wal beside it.
        let copyDir = root + "/cold"
        XCTAssertEqual(mkdir(copyDir, 0o700), 0)
        for suffix in ["", "-wal"] {
            try Files.writeAtomically(try Files.read(layout.databasePath + suffix, limit: 1 << 24), to: copyDir + "/carkey.db" + suffix)
        }
        XCTAssertThrowsError(try StoreRestore.restore(stateDirectory: stateDir, from: copyDir + "/carkey.db")) {
            guard case StorageError.backup(.walBesideBackup) = $0 else { return XCTFail("\($0)") }
        }
    }

    func testCheckpointAndCloseLeavesTheWholeStoreInCarkeyDB() throws {
        let store = try populatedStore(events: 50)
        let result = try store.database.checkpointAndClose()
        XCTAssertFalse(result.busy)
        var info = stat()
        XCTAssertEqual(stat(layout.databasePath + "-wal", &info), 0, "the WAL file is kept for its room")
        XCTAssertEqual(info.st_size, 0, "but holds nothing")
        XCTAssertThrowsError(try store.lastEventSequence(), "a closed store is not used again")
        XCTAssertEqual(try store.database.checkpointAndClose(), .init(busy: false, walFrames: 0, checkpointedFrames: 0))
        // carkey.db alone: copied without its WAL it is the same store.
        let copyDir = root + "/copy"
        XCTAssertEqual(mkdir(copyDir, 0o700), 0)
        try Files.writeAtomically(try Files.read(layout.databasePath, limit: 1 << 24), to: copyDir + "/carkey.db")
        XCTAssertEqual(try Connection(path: copyDir + "/carkey.db", create: false).scalar("SELECT COUNT(*) FROM events"), .integer(50))
    }
}

private final class StopFlag: Sendable {
    private let flag = Mutex(false)
    var isSet: Bool { flag.withLock { $0 } }
    func set() { flag.withLock { $0 = true } }
}

/// A minimal joinable thread for the concurrent-writer test.
private final class Thread: @unchecked Sendable {
    private var handle = pthread_t()
    private let body: () -> Void

    init(_ body: @escaping () -> Void) { self.body = body }

    func start() {
        let box = Unmanaged.passRetained(self)
        pthread_create(&handle, nil, { raw in
            let thread = Unmanaged<Thread>.fromOpaque(raw!).takeRetainedValue()
            thread.body()
            return nil
        }, box.toOpaque())
    }

    func join() { pthread_join(handle, nil) }
}

// Shared fixtures for the storage tests: a fresh temporary state directory per test, raw SQL
// access to the same file (what an attacker with disk access could do), and event helpers.
import XCTest
@testable import Drivers
import TestHarness
import Protocol
#if canImport(Glibc)
import Glibc
#endif

class StorageTestCase: XCTestCase {
    /// A private temporary folder; the state directory is created inside it by the store.
    var root = ""
    var stateDir: String { root + "/state" }
    var layout: StateDirectory { StateDirectory(path: stateDir) }

    override func setUpWithError() throws {
        var template = Array("/tmp/opencarkey-storage-XXXXXX".utf8CString)
        guard let made = mkdtemp(&template) else { throw Errno.current("mkdtemp") }
        root = String(cString: made)
    }

    override func tearDown() {
        removeTree(root)
    }

    /// Opens the store as the agent leaves it after start-up: with the default key file made
    /// final, as storing the car identity does (most storage tests look at that file).
    func openStore(keyProvider: KeyProvider? = nil) throws -> CarStore {
        let store = try openStoreAsIs(keyProvider: keyProvider)
        try store.fileKey?.promote()
        return store
    }

    /// Opens the store without touching the key file (a provisional key stays provisional).
    func openStoreAsIs(keyProvider: KeyProvider? = nil) throws -> CarStore {
        try CarStore.open(stateDirectory: stateDir, keyProvider: keyProvider,
                          clock: { EventTime(seconds: 1_700_000_000, trusted: true) })
    }

    /// Runs SQL on the database file through a second connection, bypassing the store.
    func rawSQL(_ sql: String, _ values: [SQLiteValue] = []) throws {
        let database = try Database(path: layout.databasePath, create: false)
        try database.transaction { try $0.run(sql, values) }
    }

    func rawScalar(_ sql: String, _ values: [SQLiteValue] = []) throws -> SQLiteValue? {
        let database = try Database(path: layout.databasePath, create: false)
        return try database.read { try $0.scalar(sql, values) }
    }

    func sealedBlob(kind: RecordKind, id: Bytes) throws -> Bytes {
        guard case .blob(let blob)? = try rawScalar("SELECT sealed FROM sealed_records WHERE kind = ?1 AND id = ?2",
                                                   [.text(kind.rawValue), .blob(id)]) else {
            XCTFail("no sealed row for \(kind) \(id.hexString)")
            return []
        }
        return blob
    }

    func setSealedBlob(_ blob: Bytes, kind: RecordKind, id: Bytes) throws {
        try rawSQL("UPDATE sealed_records SET sealed = ?3 WHERE kind = ?1 AND id = ?2",
                   [.text(kind.rawValue), .blob(id), .blob(blob)])
    }

    func tamperEvents(_ store: CarStore) throws -> [StoredEvent] {
        try store.events(since: 0, limit: 10_000).filter { $0.event.kind == .tamper }
    }

    func accessEvent(_ action: String, actor: String? = "0a1b2c") -> NewEvent {
        NewEvent(kind: .accessDecision, time: EventTime(seconds: 1_700_000_000, trusted: true), actor: actor,
                 action: EventAction(unlisted: action), result: "allowed")
    }

    func mode(_ path: String) throws -> mode_t { try Files.mode(of: path) }
}

/// Recursively deletes `path` (files, folders, symlinks themselves, not their targets).
func removeTree(_ path: String) { TestFolders.remove(path) }

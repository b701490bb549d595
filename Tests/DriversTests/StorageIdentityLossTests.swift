// A store that lost its identity while its storage key stayed is not a new car: the identity
// is only created in a fresh state directory. And schema objects dropped behind the store's
// back (the events table) come back at open, or at run time, with a storeRepaired event.
import XCTest
@testable import Drivers
import Protocol
#if canImport(Glibc)
import Glibc
#endif

final class StorageIdentityLossTests: StorageTestCase {
    func testOnlyAFreshStateDirectoryMintsTheIdentity() throws {
        let store = try openStore()
        XCTAssertTrue(store.isFreshStateDirectory)
        let identity = try store.loadOrCreateIdentityKey()
        try store.database.checkpointAndClose()
        let again = try openStore()
        XCTAssertFalse(again.isFreshStateDirectory)
        XCTAssertEqual(try again.loadOrCreateIdentityKey().publicKey, identity.publicKey)
    }

    /// A first start killed between writing its key and storing its identity (a kill -9 or a
    /// power cut in the first second of the car's life) is still a fresh car, not a damaged one:
    /// the key stays provisional until the identity it seals is durable.
    func testAFirstStartKilledBeforeItsIdentityWasStoredStartsOverCleanly() throws {
        let keyPath = stateDir + "/storage.key"
        let first = try openStoreAsIs()
        XCTAssertTrue(first.isFreshStateDirectory)
        XCTAssertEqual(access(keyPath, F_OK), -1, "no final key before the identity exists")
        XCTAssertEqual(access(keyPath + ".provisional", F_OK), 0)
        try first.database.checkpointAndClose()   // "killed" here: no identity stored
        let second = try openStoreAsIs()
        XCTAssertTrue(second.isFreshStateDirectory, "still a new car")
        let identity = try second.loadOrCreateIdentityKey()
        XCTAssertEqual(access(keyPath, F_OK), 0, "the key is final once the identity is stored")
        XCTAssertEqual(access(keyPath + ".provisional", F_OK), -1)
        try second.database.checkpointAndClose()
        let third = try openStore()
        XCTAssertFalse(third.isFreshStateDirectory)
        XCTAssertEqual(try third.loadOrCreateIdentityKey().publicKey, identity.publicKey)
    }

    func testATruncatedStoreWithItsKeyStillThereHasNoIdentityToMint() throws {
        _ = try openStore().loadOrCreateIdentityKey()
        XCTAssertEqual(truncate(layout.databasePath, 0), 0)
        for sidecar in layout.sidecarPaths { unlink(sidecar) }
        let store = try openStore()
        XCTAssertThrowsError(try store.loadOrCreateIdentityKey()) {
            XCTAssertEqual($0 as? StorageError, .identityMissing(stateDirectory: stateDir))
        }
        XCTAssertEqual(try rawScalar("SELECT COUNT(*) FROM sealed_records"), .integer(0), "nothing was minted")
    }

    func testADeletedIdentityRowIsNotReplaced() throws {
        _ = try openStore().loadOrCreateIdentityKey()
        try rawSQL("DELETE FROM sealed_records WHERE kind = 'identity' AND id = ?1", [.blob(CarStore.identityRecordID)])
        XCTAssertThrowsError(try openStore().loadOrCreateIdentityKey()) {
            XCTAssertEqual($0 as? StorageError, .identityMissing(stateDirectory: stateDir))
        }
    }

    func testAnAlteredIdentityRowIsTamperedNotReplaced() throws {
        _ = try openStore().loadOrCreateIdentityKey()
        var blob = try sealedBlob(kind: .identity, id: CarStore.identityRecordID)
        blob[blob.count / 2] ^= 0x01
        try setSealedBlob(blob, kind: .identity, id: CarStore.identityRecordID)
        XCTAssertThrowsError(try openStore().loadOrCreateIdentityKey()) {
            XCTAssertEqual($0 as? StorageError, .tampered(kind: .identity, id: CarStore.identityRecordID))
        }
        XCTAssertEqual(try sealedBlob(kind: .identity, id: CarStore.identityRecordID), blob, "the row is left for inspection")
    }

    func testADroppedEventsTableIsRecreatedAtOpenWithAnEvent() throws {
        let store = try openStore()
        try store.appendEvent(accessEvent("unlock"))
        try store.database.checkpointAndClose()
        try rawSQL("DROP TABLE events")
        let reopened = try openStore()
        XCTAssertEqual(reopened.schemaRepairs, ["table events", "trigger events_append_only", "trigger events_keep_unpublished"])
        let events = try reopened.events()
        XCTAssertEqual(events.map(\.event.result), ["storeRepaired"])
        XCTAssertEqual(events.first?.event.kind, .storage)
        // The triggers came back too: the log is append-only again.
        XCTAssertThrowsError(try rawSQL("UPDATE events SET action = 'x'"))
        try reopened.database.checkpointAndClose()
        XCTAssertEqual(try openStore().schemaRepairs, [], "nothing to repair the next time")
    }

    func testASchemaDroppedWhileOpenIsRepairedOnDemand() throws {
        let store = try openStore()
        try rawSQL("DROP TABLE events")
        XCTAssertThrowsError(try store.appendEvent(accessEvent("unlock")), "the write that met the hole fails")
        XCTAssertEqual(try store.repairMissingSchema().first, "table events")
        try store.appendEvent(accessEvent("unlock"))
        XCTAssertEqual(try store.events().map(\.event.result), ["storeRepaired", "allowed"])
        XCTAssertEqual(try store.repairMissingSchema(), [])
    }
}

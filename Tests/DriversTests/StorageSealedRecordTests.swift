// Sealed records: round trips, and every way a row can be damaged is detected, reported and
// never returned as valid.
import XCTest
@testable import Drivers
import Protocol

/// A fixed key, so a test can swap in the wrong one.
private struct FixedKey: KeyProvider {
    let key: Bytes
    func storageKey() throws -> Bytes { key }
}

final class StorageSealedRecordTests: StorageTestCase {
    private let alice = Bytes(repeating: 0xa1, count: 32)
    private let bob = Bytes(repeating: 0xb0, count: 32)
    private let alicePayload = Bytes("role=owner;permissions=all".utf8)
    private let bobPayload = Bytes("role=shared;permissions=unlock".utf8)

    private func storeWithTwoKeys() throws -> CarStore {
        let store = try openStore()
        try store.put(alicePayload, kind: .key, id: alice)
        try store.put(bobPayload, kind: .key, id: bob)
        return store
    }

    private func assertTampered(_ store: CarStore, _ id: Bytes, kind: RecordKind = .key, file: StaticString = #filePath, line: UInt = #line) {
        XCTAssertThrowsError(try store.get(kind: kind, id: id), file: file, line: line) { error in
            XCTAssertEqual(error as? StorageError, .tampered(kind: kind, id: id), file: file, line: line)
        }
    }

    func testRoundTripPutGetListDelete() throws {
        let store = try storeWithTwoKeys()
        XCTAssertEqual(try store.get(kind: .key, id: alice), alicePayload)
        XCTAssertNil(try store.get(kind: .key, id: [0x01]))
        XCTAssertNil(try store.get(kind: .share, id: alice), "kinds are separate")
        try store.put(Bytes("role=owner;permissions=none".utf8), kind: .key, id: alice)
        XCTAssertEqual(try store.get(kind: .key, id: alice), Bytes("role=owner;permissions=none".utf8), "put replaces")
        XCTAssertEqual(try store.list(kind: .key).records.map(\.id), [alice, bob])
        XCTAssertTrue(try store.delete(kind: .key, id: alice))
        XCTAssertFalse(try store.delete(kind: .key, id: alice))
        XCTAssertEqual(try store.list(kind: .key), RecordListing(records: [SealedRecord(id: bob, payload: bobPayload)], tampered: []))
        XCTAssertEqual(try tamperEvents(store), [])
    }

    func testTheFileHoldsOnlyCiphertext() throws {
        _ = try storeWithTwoKeys()
        let blob = try sealedBlob(kind: .key, id: alice)
        XCTAssertEqual(blob.count, SealedBox.overhead + alicePayload.count, "nonce || ciphertext || tag")
        let file = try Files.read(layout.databasePath, limit: 1 << 24) + ((try? Files.read(layout.databasePath + "-wal", limit: 1 << 24)) ?? [])
        XCTAssertFalse(file.hexString.contains(alicePayload.hexString))
        XCTAssertNotEqual(try sealedBlob(kind: .key, id: bob).prefix(12), blob.prefix(12), "fresh nonce per record")
    }

    func testAFlippedByteAnywhereIsTampered() throws {
        let store = try storeWithTwoKeys()
        let original = try sealedBlob(kind: .key, id: alice)
        for position in [0, 11, 12, original.count - 17, original.count - 1] { // nonce, ciphertext, tag
            var edited = original
            edited[position] ^= 0x01
            try setSealedBlob(edited, kind: .key, id: alice)
            assertTampered(store, alice)
        }
        XCTAssertEqual(try store.get(kind: .key, id: bob), bobPayload, "the other row is unaffected")
        let reported = try tamperEvents(store)
        XCTAssertEqual(reported.count, 5, "each distinct damage reported once")
        XCTAssertEqual(reported.first?.event.result, "tamper detected")
        XCTAssertEqual(reported.first?.event.fault, EventFault(name: "recordTampered"))
        XCTAssertEqual(reported.first?.event.detailJSON, "{\"recordKind\":\"key\",\"recordID\":\"\(alice.hexString)\"}")
    }

    func testTruncatedAndRetypedRowsAreTampered() throws {
        let store = try storeWithTwoKeys()
        let original = try sealedBlob(kind: .key, id: alice)
        for length in [0, 10, 28, original.count - 1] {
            try setSealedBlob(Array(original.prefix(length)), kind: .key, id: alice)
            assertTampered(store, alice)
        }
        try rawSQL("UPDATE sealed_records SET sealed = 'owner' WHERE id = ?1", [.blob(alice)])
        assertTampered(store, alice)
        XCTAssertEqual(try tamperEvents(store).count, 5)
    }

    func testSwappedRowsAreTampered() throws {
        let store = try storeWithTwoKeys()
        let aliceBlob = try sealedBlob(kind: .key, id: alice)
        let bobBlob = try sealedBlob(kind: .key, id: bob)
        try setSealedBlob(bobBlob, kind: .key, id: alice)
        try setSealedBlob(aliceBlob, kind: .key, id: bob)
        assertTampered(store, alice)
        assertTampered(store, bob)
        let listing = try store.list(kind: .key)
        XCTAssertEqual(listing.records, [], "listing never returns a tampered row")
        XCTAssertEqual(listing.tampered, [alice, bob], "but reports it")
    }

    func testARowMovedToAnotherKindOrIDIsTampered() throws {
        let store = try storeWithTwoKeys()
        try rawSQL("UPDATE sealed_records SET kind = 'revocation' WHERE id = ?1", [.blob(alice)])
        assertTampered(store, alice, kind: .revocation)
        try rawSQL("UPDATE sealed_records SET id = ?2 WHERE id = ?1 AND kind = 'key'", [.blob(bob), .blob([0xee])])
        assertTampered(store, [0xee])
        // An ID no seal could carry (over 255 bytes) is tampering, not a crash.
        try rawSQL("INSERT INTO sealed_records VALUES ('key', ?1, ?2)", [.blob(Bytes(repeating: 1, count: 300)), .blob(Bytes(repeating: 2, count: 64))])
        XCTAssertEqual(try store.list(kind: .key).tampered, [Bytes(repeating: 1, count: 300), [0xee]])
    }

    func testAWrongStorageKeyMakesEveryRecordTampered() throws {
        let right = try FixedKey(key: SystemRandom().randomBytes(32))
        let store = try openStore(keyProvider: right)
        try store.put(alicePayload, kind: .key, id: alice)
        try store.put(bobPayload, kind: .share, id: bob)
        _ = try store.loadOrCreateIdentityKey()

        let wrong = try openStore(keyProvider: FixedKey(key: SystemRandom().randomBytes(32)))
        XCTAssertEqual(try wrong.list(kind: .key).tampered, [alice])
        XCTAssertEqual(try wrong.list(kind: .share).tampered, [bob])
        XCTAssertThrowsError(try wrong.loadOrCreateIdentityKey()) {
            XCTAssertEqual($0 as? StorageError, .tampered(kind: .identity, id: CarStore.identityRecordID))
        }
        XCTAssertEqual(Set(try tamperEvents(wrong).compactMap(\.event.detailJSON)).count, 3)
        XCTAssertEqual(try store.get(kind: .key, id: alice), alicePayload, "the right key still opens everything")
    }

    func testTamperMetInsideARolledBackWriteIsStillReported() throws {
        struct Abort: Error {}
        let store = try storeWithTwoKeys()
        var edited = try sealedBlob(kind: .key, id: alice)
        edited[20] ^= 0xff
        try setSealedBlob(edited, kind: .key, id: alice)
        XCTAssertThrowsError(try store.write { transaction in
            _ = try? transaction.get(kind: .key, id: self.alice)
            try transaction.put([9], kind: .key, id: [0x09])
            throw Abort()
        })
        XCTAssertNil(try store.get(kind: .key, id: [0x09]), "the write rolled back")
        XCTAssertEqual(try tamperEvents(store).count, 1, "the report did not")
        // A second read of the same damage is refused again but not logged again.
        assertTampered(store, alice)
        XCTAssertEqual(try tamperEvents(store).count, 1)
    }

    func testInvalidArgumentsAreRefused() throws {
        let store = try openStore()
        func isInvalidArgument(_ error: Error) -> Bool {
            if case .invalidArgument? = error as? StorageError { return true }
            return false
        }
        XCTAssertThrowsError(try store.put([], kind: .key, id: alice)) { XCTAssertTrue(isInvalidArgument($0), "\($0)") }
        XCTAssertThrowsError(try store.put([1], kind: .key, id: [])) { XCTAssertTrue(isInvalidArgument($0), "\($0)") }
        XCTAssertThrowsError(try store.put([1], kind: .key, id: Bytes(repeating: 0, count: 256))) { XCTAssertTrue(isInvalidArgument($0)) }
        XCTAssertThrowsError(try store.get(kind: .key, id: [])) { XCTAssertTrue(isInvalidArgument($0)) }
        XCTAssertNil(RecordKind(rawValue: "Key"))
        XCTAssertNil(RecordKind(rawValue: ""))
        XCTAssertNil(RecordKind(rawValue: String(repeating: "k", count: 33)))
    }

    func testIdentityKeyIsCreatedOnceAndSurvivesRestarts() throws {
        let first = try openStore().loadOrCreateIdentityKey()
        let again = try openStore().loadOrCreateIdentityKey()
        XCTAssertEqual(again.publicKey, first.publicKey)
        XCTAssertEqual(try first.rawScalar(), try again.rawScalar())
    }

    func testATamperedIdentityKeyIsNeverReplaced() throws {
        let store = try openStore()
        _ = try store.loadOrCreateIdentityKey()
        var blob = try sealedBlob(kind: .identity, id: CarStore.identityRecordID)
        blob[blob.count - 1] ^= 0x80
        try setSealedBlob(blob, kind: .identity, id: CarStore.identityRecordID)
        XCTAssertThrowsError(try store.loadOrCreateIdentityKey()) {
            XCTAssertEqual($0 as? StorageError, .tampered(kind: .identity, id: CarStore.identityRecordID))
        }
        XCTAssertEqual(try sealedBlob(kind: .identity, id: CarStore.identityRecordID), blob, "not overwritten")
        XCTAssertEqual(try tamperEvents(store).count, 1)
    }

    func testAdvertisingKeyIsCreatedOnceBesideTheIdentityAndSurvivesRestarts() throws {
        let store = try openStore()
        XCTAssertNil(try store.get(kind: .identity, id: CarStore.advertisingKeyRecordID))
        let first = try store.loadOrCreateAdvertisingKey()
        XCTAssertEqual(try store.get(kind: .identity, id: CarStore.advertisingKeyRecordID), first.bytes, "sealed beside the identity")
        XCTAssertEqual(try store.loadOrCreateAdvertisingKey(), first, "created once")
        let again = try openStore().loadOrCreateAdvertisingKey()
        XCTAssertEqual(again.bytes, first.bytes, "the same key after a reopen")
        XCTAssertNotEqual(first.bytes, Bytes(repeating: 0, count: 16))
        XCTAssertEqual(try openStore().list(kind: .identity).records.map(\.id).sorted { $0.lexicographicallyPrecedes($1) },
                       [CarStore.advertisingKeyRecordID], "no identity key was made on the way")
    }

    func testATamperedAdvertisingKeyIsNeverReplaced() throws {
        let store = try openStore()
        _ = try store.loadOrCreateAdvertisingKey()
        var blob = try sealedBlob(kind: .identity, id: CarStore.advertisingKeyRecordID)
        blob[blob.count - 1] ^= 0x80
        try setSealedBlob(blob, kind: .identity, id: CarStore.advertisingKeyRecordID)
        XCTAssertThrowsError(try store.loadOrCreateAdvertisingKey()) {
            XCTAssertEqual($0 as? StorageError, .tampered(kind: .identity, id: CarStore.advertisingKeyRecordID))
        }
        XCTAssertEqual(try sealedBlob(kind: .identity, id: CarStore.advertisingKeyRecordID), blob, "not overwritten")
        // A row of the wrong length (written by something else) is refused, not used.
        try store.put([1, 2, 3], kind: .identity, id: CarStore.advertisingKeyRecordID)
        XCTAssertThrowsError(try store.loadOrCreateAdvertisingKey())
    }
}

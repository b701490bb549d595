// The store side of `vault migrate` (issue 18), without a device: every sealed record moves to
// the new storage key in one transaction; one record that does not open stops it with nothing
// changed; a store re-sealed under a vault's key is refused with the old key file and opens
// with the vault; the identity row is kept, or removed with --new-identity.
#if canImport(Glibc)
import Glibc
#endif
import XCTest
import Drivers
import Protocol
import TestHarness
@testable import carkey_agent

/// A vault whose storage key is fixed bytes and whose device identity is an in-memory key.
private final class FixedVault: CarKeyVault, @unchecked Sendable {
    let kind = "fixed"
    let summary = "test vault"
    let key: Bytes
    var identity: P256PrivateKey?

    init(key: Bytes) { self.key = key }

    func storageKey() throws(SecureKeyError) -> Bytes { key }

    func deviceIdentity(create: Bool) throws(SecureKeyError) -> (any ProtocolKeyAgreement)? {
        if identity == nil, create { identity = try? P256PrivateKey.generate() }
        return identity
    }
}

final class VaultResealTests: XCTestCase {
    private var folder = ""

    override func setUp() { folder = TestFolders.make(prefix: "opencarkey-reseal") }
    override func tearDown() { TestFolders.remove(folder) }

    private var stateDir: String { folder + "/state" }
    private let newKey = Bytes(repeating: 0x5A, count: 32)

    /// A file-vault store with an identity, an advertising key and a few keychain-like rows.
    private func fileStore() throws -> P256PublicKey {
        let store = try CarStore.open(stateDirectory: stateDir)
        let identity = try store.loadOrCreateIdentityKey()
        _ = try store.loadOrCreateAdvertisingKey()
        try store.write { transaction in
            for index in 0..<5 { try transaction.put([UInt8(index), 1, 2, 3], kind: .key, id: [UInt8(index) + 1]) }
        }
        _ = try store.checkpointAndClose()
        return identity.publicKey
    }

    func testEveryRecordMovesAndTheIdentityStays() throws {
        let identity = try fileStore()
        let store = try CarStore.open(stateDirectory: stateDir)
        let summary = try store.resealAll(under: newKey, removeIdentity: false, vaultKind: "fixed")
        _ = try store.checkpointAndClose()
        XCTAssertEqual(summary.resealed, 7, "5 keys, the identity, the advertising key")
        XCTAssertFalse(summary.identityRemoved)

        XCTAssertThrowsError(try CarStore.open(stateDirectory: stateDir).loadOrCreateIdentityKey(), "the old key file opens nothing any more")
        let vault = FixedVault(key: newKey)
        let reopened = try CarStore.open(stateDirectory: stateDir, keyProvider: vault)
        XCTAssertEqual(try reopened.loadOrCreateIdentity(vault: vault).publicKey, identity, "the same identity, from the store")
        XCTAssertNil(vault.identity, "no device identity was made")
        let keys = try reopened.read { try $0.list(kind: .key) }
        XCTAssertEqual(keys.records.count, 5)
        XCTAssertEqual(keys.tampered, [])
        XCTAssertTrue(try reopened.events(since: 0, limit: 100).contains { $0.event.action == "vault migrate" })
    }

    func testNewIdentityRemovesTheRowAndTheDeviceKeyIsUsed() throws {
        let old = try fileStore()
        let vault = FixedVault(key: newKey)
        let device = try XCTUnwrap(try vault.deviceIdentity(create: true))
        let store = try CarStore.open(stateDirectory: stateDir)
        let summary = try store.resealAll(under: newKey, removeIdentity: true, vaultKind: "fixed")
        XCTAssertEqual(summary.resealed, 6)
        XCTAssertTrue(summary.identityRemoved)
        _ = try store.checkpointAndClose()
        let reopened = try CarStore.open(stateDirectory: stateDir, keyProvider: vault)
        let identity = try reopened.loadOrCreateIdentity(vault: vault)
        XCTAssertEqual(identity.publicKey, device.publicKey)
        XCTAssertNotEqual(identity.publicKey, old)
    }

    func testOneRecordThatDoesNotOpenStopsItWithNothingChanged() throws {
        _ = try fileStore()
        // Flip one byte of one keychain row behind the store's back.
        let connection = try Connection(path: stateDir + "/carkey.db", create: false)
        try connection.run("UPDATE sealed_records SET sealed = zeroblob(40) WHERE kind = 'key' AND id = x'03'")
        connection.close()
        let store = try CarStore.open(stateDirectory: stateDir)
        XCTAssertThrowsError(try store.resealAll(under: newKey, removeIdentity: false, vaultKind: "fixed")) { error in
            XCTAssertTrue("\(error)".contains("tampered"), "\(error)")
        }
        _ = try store.checkpointAndClose()
        let again = try CarStore.open(stateDirectory: stateDir)
        XCTAssertNoThrow(try again.loadOrCreateIdentityKey(), "still sealed with the old key")
        XCTAssertEqual(try again.read { try $0.list(kind: .key) }.records.count, 4, "the other rows untouched")
        XCTAssertThrowsError(try CarStore.open(stateDirectory: stateDir, keyProvider: FixedVault(key: newKey))) { error in
            XCTAssertTrue("\(error)".contains("does not open the store"), "\(error)")
        }
    }

    func testAFreshDirectoryGetsADeviceIdentityAndNoRow() throws {
        let vault = FixedVault(key: newKey)
        let store = try CarStore.open(stateDirectory: stateDir, keyProvider: vault)
        let identity = try store.loadOrCreateIdentity(vault: vault)
        XCTAssertEqual(identity.publicKey, vault.identity?.publicKey)
        XCTAssertNil(try store.read { try $0.get(kind: .identity, id: CarStore.identityRecordID) })
        XCTAssertEqual(access(stateDir + "/storage.key", F_OK), -1, "no key file")
        _ = try store.loadOrCreateAdvertisingKey()
        _ = try store.checkpointAndClose()
        // The device lost its identity (another token): not recreated in silence.
        let emptied = FixedVault(key: newKey)
        let reopened = try CarStore.open(stateDirectory: stateDir, keyProvider: emptied)
        XCTAssertThrowsError(try reopened.loadOrCreateIdentity(vault: emptied)) { error in
            guard case StorageError.identityMissing = error else { return XCTFail("\(error)") }
        }
    }
}

// The agent's keychain persistence and trusted-time wiring, below the binaries: what goes into
// the store in one transaction, what is batched, what a tampered row does on load.
import XCTest
import Drivers
import Protocol
@testable import carkey_agent

final class KeychainStoreTests: XCTestCase {
    private var folder = ""
    private var store: CarStore!
    private let vehicle = try! VehicleID("OCK-UNIT-0001")
    private let ownerA = try! P256PrivateKey.generate()
    private let ownerB = try! P256PrivateKey.generate()
    private let now = ProtocolTime(monotonicMillis: 1_000, wallSeconds: 1_800_000_000, wallClockTrusted: true)

    override func setUpWithError() throws {
        folder = AgentTestSupport.temporaryDirectory()
        store = try CarStore.open(stateDirectory: folder + "/state")
    }

    override func tearDown() {
        store = nil
        AgentTestSupport.removeTree(folder)
    }

    private func owner(_ key: P256PrivateKey) -> KeyRecord { KeyRecord(publicKey: key.publicKey, role: .owner, permissions: .all) }

    /// Two owners in the store, loaded the way the agent loads them.
    private func storedKeychain() throws -> StoredKeychain {
        try store.write { try $0.persist([.putKey(owner(ownerA)), .putKey(owner(ownerB))]) }
        let loaded = try KeychainLoader.load(from: store)
        XCTAssertEqual(loaded.keychain.ownerCount, 2)
        return StoredKeychain(store: store, keychain: loaded.keychain, log: AgentLog(), nowMillis: now.monotonicMillis)
    }

    private func revocation(of target: P256PrivateKey, by issuer: P256PrivateKey, keys: any KeyDirectory) throws -> VerifiedRevocation {
        let signed = try Revocation.issue(by: issuer, vehicleID: vehicle, target: .key(KeyID(publicKey: target.publicKey)), issuedAt: 0)
        return try RevocationValidator.verify(signed.encoded(), vehicleID: vehicle, keys: keys)
    }

    func testARevocationIsStoredWithItsEventAndSurvivesAReload() throws {
        let keychain = try storedKeychain()
        let before = try store.lastEventSequence()
        let outcome = try keychain.apply(try revocation(of: ownerB, by: ownerA, keys: keychain.shared),
                                         carriedBy: KeyID(publicKey: ownerA.publicKey), link: LinkID(7), source: "session", now: now)
        XCTAssertEqual(outcome.revokedKeys, [KeyID(publicKey: ownerB.publicKey)])
        XCTAssertEqual(keychain.shared.lookup(KeyID(publicKey: ownerB.publicKey))?.revoked, true, "the engine sees it at once")

        let events = try store.events(since: before)
        XCTAssertEqual(events.count, 1)
        XCTAssertEqual(events.first?.event.kind, .revocation)
        XCTAssertEqual(events.first?.event.actor, KeyID(publicKey: ownerA.publicKey).description)
        XCTAssertEqual(try store.list(kind: .revocation).records.count, 1)

        let reloaded = try KeychainLoader.load(from: store).keychain
        XCTAssertEqual(reloaded.lookup(KeyID(publicKey: ownerB.publicKey))?.revoked, true)
        XCTAssertTrue(reloaded.isRevoked(.key(KeyID(publicKey: ownerB.publicKey))))
        XCTAssertEqual(reloaded.ownerCount, 1)
    }

    func testARefusedChangeWritesNothingAndChangesNothing() throws {
        let keychain = try storedKeychain()
        _ = try keychain.apply(try revocation(of: ownerB, by: ownerA, keys: keychain.shared), carriedBy: nil, link: nil, source: "test", now: now)
        let sequence = try store.lastEventSequence()
        let last = try revocation(of: ownerA, by: ownerA, keys: keychain.shared)
        XCTAssertThrowsError(try keychain.apply(last, carriedBy: nil, link: nil, source: "test", now: now)) {
            XCTAssertEqual($0 as? FaultCode, .lastOwnerKey)
        }
        XCTAssertEqual(try store.lastEventSequence(), sequence)
        XCTAssertEqual(try store.list(kind: .revocation).records.count, 1)
        XCTAssertEqual(keychain.snapshot.ownerCount, 1)
    }

    func testLastUseIsWrittenInBatchesNotPerSession() throws {
        let keychain = try storedKeychain()
        let id = KeyID(publicKey: ownerA.publicKey)
        for step in 0..<5 { keychain.recordUse(of: id, now: now.advanced(byMillis: UInt64(step) * 1000)) }
        XCTAssertEqual(keychain.snapshot.activity(of: id)?.useCount, 5, "in memory at once")
        XCTAssertEqual(keychain.pendingActivityCount, 1)

        keychain.flushActivity(nowMillis: now.monotonicMillis + 10_000)
        XCTAssertTrue(try store.list(kind: .keyActivity).records.isEmpty, "not yet: the interval has not passed")
        keychain.flushActivity(nowMillis: now.monotonicMillis + StoredKeychain.activityFlushMillis)
        let stored = try store.list(kind: .keyActivity).records
        XCTAssertEqual(stored.count, 1)
        XCTAssertEqual(try KeyActivity(storedBytes: stored[0].payload).useCount, 5)
        XCTAssertEqual(keychain.pendingActivityCount, 0)

        keychain.recordUse(of: id, now: now)
        keychain.flushActivity(nowMillis: now.monotonicMillis + StoredKeychain.activityFlushMillis + 1, force: true)
        XCTAssertEqual(try KeyActivity(storedBytes: try store.list(kind: .keyActivity).records[0].payload).useCount, 6, "forced at stop")
        XCTAssertEqual(try store.events().filter { $0.event.kind != .storage }.count, 0, "last use is not an audit event of its own")
    }

    func testSwappedAndTruncatedRowsAreSkippedAndReported() throws {
        let a = KeyID(publicKey: ownerA.publicKey).bytes, b = KeyID(publicKey: ownerB.publicKey).bytes
        try store.write { try $0.persist([.putKey(owner(ownerA)), .putKey(owner(ownerB)),
                                          .putActivity(KeyActivity(keyID: KeyID(publicKey: ownerA.publicKey), enrolledAt: 5, enrolledAtTrusted: true))]) }
        try store.database.transaction { connection in
            func sealed(_ kind: String, _ id: Bytes) throws -> Bytes {
                guard case .blob(let bytes)? = try connection.scalar("SELECT sealed FROM sealed_records WHERE kind = ?1 AND id = ?2",
                                                                     [.text(kind), .blob(id)]) else { throw MissingRow() }
                return bytes
            }
            let (rowA, rowB, activity) = (try sealed("key", a), try sealed("key", b), try sealed("key-activity", a))
            let update = "UPDATE sealed_records SET sealed = ?1 WHERE kind = ?2 AND id = ?3"
            try connection.run(update, [.blob(rowB), .text("key"), .blob(a)])
            try connection.run(update, [.blob(rowA), .text("key"), .blob(b)])
            try connection.run(update, [.blob(Array(activity.dropLast(3))), .text("key-activity"), .blob(a)])
        }
        let loaded = try KeychainLoader.load(from: store)
        XCTAssertEqual(loaded.keychain.listing.count, 0, "neither swapped key is used")
        XCTAssertEqual(Set(loaded.skipped.map { "\($0.kind) \($0.id.hexString)" }),
                       ["key \(a.hexString)", "key \(b.hexString)", "key-activity \(a.hexString)"])
        XCTAssertTrue(loaded.skipped.allSatisfy { $0.reason == .tampered })
        XCTAssertEqual(try store.events().filter { $0.event.kind == .tamper }.count, 3)
    }

    func testTheClockTrustsSyncedTimeAndPersistsTheMarkSparingly() {
        let monotonic = ManualClock(startMillis: 0)
        let wall = WallStub(1_800_000_000)
        let clock = AgentClock(monotonic: monotonic, wall: { wall.value }, systemSynchronized: { true })
        clock.setTrustedMark(nil)
        XCTAssertTrue(clock.now().wallClockTrusted)
        XCTAssertEqual(clock.markToPersist(minimumStepSeconds: 60), 1_800_000_000, "the first growth of a run at once")
        clock.notePersisted(1_800_000_000)
        wall.value += 30
        _ = clock.now()
        XCTAssertNil(clock.markToPersist(minimumStepSeconds: 60), "then only every minute of growth")
        XCTAssertEqual(clock.markToPersist(minimumStepSeconds: 0), 1_800_000_030, "or at stop")
        wall.value += 30
        _ = clock.now()
        XCTAssertEqual(clock.markToPersist(minimumStepSeconds: 60), 1_800_000_060)
    }

    func testOwnerTimestampsAnchorTimeOnlyNearTheMark() {
        let monotonic = ManualClock(startMillis: 0)
        let fresh = AgentClock(monotonic: monotonic, wall: { 0 }, systemSynchronized: { false })
        fresh.setTrustedMark(nil)
        let owner = KeyID(publicKey: ownerA.publicKey)
        XCTAssertEqual(fresh.observeOwnerTimestamp(1_800_000_000, keyID: owner), .awaitingCorroboration, "no mark: one owner is not enough")
        XCTAssertFalse(fresh.now().wallClockTrusted)

        let known = AgentClock(monotonic: monotonic, wall: { 0 }, systemSynchronized: { false })
        known.setTrustedMark(1_800_000_000)
        let sample = known.now()
        XCTAssertFalse(sample.wallClockTrusted)
        XCTAssertEqual(sample.wallSeconds, 1_800_000_000, "untrusted time never reads earlier than the mark")
        XCTAssertEqual(known.observeOwnerTimestamp(1_800_000_100, keyID: owner), .anchored(seconds: 1_800_000_100))
        monotonic.advance(by: 5_000)
        XCTAssertEqual(known.now(), ProtocolTime(monotonicMillis: 5_000, wallSeconds: 1_800_000_105, wallClockTrusted: true))
        XCTAssertEqual(known.trustedMark, 1_800_000_105)
    }

    func testKernelClockStatusAndControlProtocolPieces() throws {
        let staUnsync: Int32 = 0x0040
        XCTAssertTrue(KernelClockStatus(state: 0, statusBits: 0x2001, maxErrorMicros: 20_000).isSynchronized)
        XCTAssertFalse(KernelClockStatus(state: 0, statusBits: staUnsync, maxErrorMicros: 20_000).isSynchronized)
        XCTAssertFalse(KernelClockStatus(state: 5, statusBits: 0, maxErrorMicros: 20_000).isSynchronized, "TIME_ERROR")
        XCTAssertFalse(KernelClockStatus(state: 0, statusBits: 0, maxErrorMicros: 16_000_000).isSynchronized)
        XCTAssertNoThrow(try KernelClockStatus.read(), "adjtimex in read-only mode needs no privilege")

        XCTAssertEqual(ControlResponse.ok(["code 000123 expires-in 60"]).wireLines, ["code 000123 expires-in 60", "ok"])
        XCTAssertEqual(ControlResponse.failure("two\nlines").wireLines, ["error two lines"])
        XCTAssertEqual(ControlResponse(wireLines: ["a 1", "error nope"]), ControlResponse(lines: ["a 1"], error: "nope"))
        XCTAssertNil(ControlResponse(wireLines: ["a 1"]))
        XCTAssertTrue(ControlAccess.allows(peerUserID: 1000, ownUserID: 1000))
        XCTAssertTrue(ControlAccess.allows(peerUserID: 0, ownUserID: 1000))
        XCTAssertFalse(ControlAccess.allows(peerUserID: 1001, ownUserID: 1000))
        XCTAssertEqual(PairingRefusal.keychainFull(activeKeys: 32, capacity: 32).fault, .keychainFull)
    }
}

private struct MissingRow: Error {}

private final class WallStub: @unchecked Sendable {
    var value: Int64
    init(_ value: Int64) { self.value = value }
}

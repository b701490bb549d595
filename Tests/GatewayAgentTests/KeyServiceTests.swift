// KeyService against a real store and engine: revocations from outside a session (the cloud
// path: verified, applied, logged, sessions ended) and the pairing window's free-slot check.
import XCTest
import Drivers
import Protocol
@testable import carkey_agent

final class KeyServiceTests: XCTestCase {
    private var folder = ""
    private var store: CarStore!
    private let vehicle = try! VehicleID("OCK-UNIT-0002")
    private let ownerA = try! P256PrivateKey.generate()
    private let ownerB = try! P256PrivateKey.generate()
    private let now = ProtocolTime(monotonicMillis: 5_000, wallSeconds: 1_800_000_000, wallClockTrusted: false)

    override func setUpWithError() throws {
        folder = AgentTestSupport.temporaryDirectory()
        store = try CarStore.open(stateDirectory: folder + "/state")
    }

    override func tearDown() {
        store = nil
        AgentTestSupport.removeTree(folder)
    }

    private func service(owners: [P256PrivateKey], capacity: Int = Keychain.defaultCapacity) throws -> (KeyService, CarProtocolEngine) {
        try store.write { try $0.persist(owners.map { .putKey(KeyRecord(publicKey: $0.publicKey, role: .owner, permissions: .all)) }) }
        let keys = try KeyService.load(store: store, capacity: capacity, clock: AgentClock(systemSynchronized: { false }), log: AgentLog())
        let engine = CarProtocolEngine(configuration: CarProtocolConfiguration(vehicleID: vehicle), identity: try P256PrivateKey.generate(),
                                       keys: keys.directory, certificateVerifier: keys.certificateVerifier)
        return (keys, engine)
    }

    private func revocation(of target: P256PrivateKey, by issuer: P256PrivateKey, vehicle: VehicleID? = nil) throws -> Bytes {
        try Revocation.issue(by: issuer, vehicleID: vehicle ?? self.vehicle, target: .key(KeyID(publicKey: target.publicKey)),
                             issuedAt: 1_800_000_000).encoded()
    }

    func testARevocationFromOutsideASessionIsVerifiedAppliedAndLogged() throws {
        var (keys, engine) = try service(owners: [ownerA, ownerB])
        let before = try store.lastEventSequence()

        let wrongCar = keys.applyRevocation(try revocation(of: ownerB, by: ownerA, vehicle: try VehicleID("OTHER-CAR")),
                                            source: "cloud", engine: &engine, now: now)
        XCTAssertEqual(wrongCar.fault, .wrongVehicle)
        let stranger = try P256PrivateKey.generate()
        XCTAssertEqual(keys.applyRevocation(try revocation(of: ownerB, by: stranger), source: "cloud", engine: &engine, now: now).fault,
                       .invalidRevocation, "only an enrolled owner may revoke")
        XCTAssertEqual(try store.lastEventSequence(), before, "a refused revocation writes nothing")

        let applied = keys.applyRevocation(try revocation(of: ownerB, by: ownerA), source: "cloud", engine: &engine, now: now)
        XCTAssertNil(applied.fault)
        XCTAssertEqual(applied.actions, [], "no session of the revoked key was open")
        XCTAssertEqual(keys.directory.lookup(KeyID(publicKey: ownerB.publicKey))?.revoked, true)
        let event = try XCTUnwrap(try store.events(since: before).first)
        XCTAssertEqual(event.event.kind, .revocation)
        XCTAssertTrue(event.event.detailJSON?.contains(#""source":"cloud""#) == true, event.event.detailJSON ?? "")

        XCTAssertEqual(keys.applyRevocation(try revocation(of: ownerA, by: ownerA), source: "cloud", engine: &engine, now: now).fault,
                       .lastOwnerKey)
    }

    func testThePairingWindowOpensOnlyWithAFreeSlot() throws {
        var (full, fullEngine) = try service(owners: [ownerA], capacity: 1)
        let refused = full.openPairingWindow(engine: &fullEngine, now: now)
        guard case .failure(let refusal) = refused.result else { return XCTFail("opened on a full keychain") }
        XCTAssertEqual(refusal, .keychainFull(activeKeys: 1, capacity: 1))
        XCTAssertTrue(refusal.description.contains("revoke a key"), refusal.description)
        XCTAssertFalse(fullEngine.isPairingWindowOpen(now: now))
        XCTAssertEqual(refused.actions, [])

        var (keys, engine) = try service(owners: [], capacity: 2)
        let opened = keys.openPairingWindow(engine: &engine, now: now)
        guard case .success(let window) = opened.result else { return XCTFail("not opened") }
        XCTAssertEqual(window.code.text.count, 6)
        XCTAssertEqual(window.expiresInSeconds, 60)
        XCTAssertTrue(engine.isPairingWindowOpen(now: now))
        XCTAssertEqual(opened.actions.count, 1, "the window's own audit record")
        _ = full
    }
}

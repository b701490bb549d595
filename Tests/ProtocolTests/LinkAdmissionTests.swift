// Issue 14: one attacker in radio range must not lock everyone out. Failures are a peer's own
// (no car-wide record), handshake crypto is budgeted per peer and car-wide (over budget is
// `busy`, without signing), an owner's Hello ends a guest's session when the table is full,
// and a key holds at most one session.
import XCTest
import Synchronization
@testable import Protocol

/// The car identity, counting how often the car signs (a Challenge costs one signature).
final class CountingSigner: ProtocolSigner {
    let key: P256PrivateKey
    private let count = Mutex(0)
    init(_ key: P256PrivateKey) { self.key = key }
    var publicKey: P256PublicKey { key.publicKey }
    var signatures: Int { count.withLock { $0 } }
    func signature(for message: Bytes) throws -> ECDSASignature {
        count.withLock { $0 += 1 }
        return try key.signature(for: message)
    }
}

/// An engine with a counting identity and a directory of owner and shared keys.
struct AdmissionRig {
    let signer = CountingSigner(Fixtures.carIdentity)
    let directory: InMemoryKeyDirectory
    var car: CarProtocolEngine
    var now = Fixtures.time(trusted: true)

    init(records: [KeyRecord], configure: (inout CarProtocolConfiguration) -> Void = { _ in }) {
        directory = InMemoryKeyDirectory(records)
        var configuration = CarProtocolConfiguration(vehicleID: Fixtures.vehicleID)
        configure(&configuration)
        car = CarProtocolEngine(configuration: configuration, identity: signer, keys: directory,
                                random: SeededRandom("admission"), ephemeralKeys: DerivedEphemeralKeys("car eph"))
    }

    mutating func advance(millis: UInt64) { now = now.advanced(byMillis: millis) }

    func phone(_ key: P256PrivateKey) -> PhoneProtocolSession {
        PhoneProtocolSession(configuration: PhoneConfiguration(longTermKey: key, carIdentityKey: Fixtures.carIdentity.publicKey,
                                                               vehicleID: Fixtures.vehicleID))
    }

    /// Hello on `link`; the car's actions.
    mutating func hello(_ phone: inout PhoneProtocolSession, link: LinkID) throws -> [CarAction] {
        car.receive(try phone.start(), from: link, now: now)
    }

    /// A whole handshake on `link`; the car's actions for the AuthResponse (nil: no Challenge).
    mutating func session(_ key: P256PrivateKey, link: LinkID) throws -> (helloActions: [CarAction], authActions: [CarAction]?) {
        var phone = phone(key)
        let helloActions = try hello(&phone, link: link)
        guard let challenge = helloActions.sent.last, challenge.first == MessageType.challenge.rawValue,
              case .send(let auth) = try phone.receive(challenge, now: now) else { return (helloActions, nil) }
        return (helloActions, car.receive(auth, from: link, now: now))
    }

    static func malformed() -> Bytes { [MessageType.hello.rawValue, 0x01, 0x00] }
}

final class LinkAdmissionTests: XCTestCase {
    let owner = Fixtures.phoneKey
    let guest = Fixtures.otherPhoneKey
    var ownerRecord: KeyRecord { KeyRecord(publicKey: owner.publicKey, role: .owner, permissions: .all) }
    var guestRecord: KeyRecord { KeyRecord(publicKey: guest.publicKey, role: .shared, permissions: .unlock) }

    // MARK: R0: failures are per peer

    func testFailuresOnManyLinksDoNotBlockAnotherLink() throws {
        var rig = AdmissionRig(records: [ownerRecord])
        // The attack: bursts of 21 malformed frames, each on a new connection.
        for burst in 0..<8 {
            for _ in 0..<21 { _ = rig.car.receive(AdmissionRig.malformed(), from: LinkID(100 + UInt64(burst)), now: rig.now) }
            rig.advance(millis: 100)
        }
        let (_, auth) = try rig.session(owner, link: LinkID(1))
        XCTAssertEqual(rig.car.establishedLinks, [LinkID(1)], "the owner's fresh link is not blocked: \(String(describing: auth))")
    }

    func testTheFailureThatBlocksALinkClosesIt() throws {
        var rig = AdmissionRig(records: [ownerRecord])
        let link = LinkID(5)
        for n in 0..<4 {
            let actions = rig.car.receive(AdmissionRig.malformed(), from: link, now: rig.now)
            XCTAssertEqual(actions.cleartextFault, .malformedMessage)
            XCTAssertTrue(actions.closed.isEmpty, "failure \(n + 1) does not close")
        }
        let fifth = rig.car.receive(AdmissionRig.malformed(), from: link, now: rig.now)
        XCTAssertEqual(fifth.cleartextFault, .malformedMessage)
        XCTAssertEqual(fifth.closed, [link], "the fifth failure blocks the link and closes it")
        let after = rig.car.receive(AdmissionRig.malformed(), from: link, now: rig.now)
        XCTAssertEqual(after.cleartextFault, .rateLimited)
        XCTAssertEqual(after.closed, [link])
    }

    func testAPeerAddressCarriesItsFailuresAcrossReconnects() throws {
        var rig = AdmissionRig(records: [ownerRecord])
        for n in 0..<5 {
            let link = LinkID(10 + UInt64(n))
            rig.car.linkOpened(link, peerAddress: "AA:BB:CC:DD:EE:01")
            _ = rig.car.receive(AdmissionRig.malformed(), from: link, now: rig.now)
            _ = rig.car.linkClosed(link, now: rig.now)
        }
        rig.car.linkOpened(LinkID(20), peerAddress: "AA:BB:CC:DD:EE:01")
        XCTAssertEqual(try rig.session(owner, link: LinkID(20)).helloActions.cleartextFault, .rateLimited,
                       "the same peer on a new link is still blocked")
        rig.car.linkOpened(LinkID(21), peerAddress: "AA:BB:CC:DD:EE:02")
        _ = try rig.session(owner, link: LinkID(21))
        XCTAssertEqual(rig.car.establishedLinks, [LinkID(21)], "another peer is not")
    }

    // MARK: H2: the handshake budget

    func testOverBudgetIsBusyWithoutSigning() throws {
        var rig = AdmissionRig(records: [ownerRecord])
        var phone = rig.phone(owner)
        // One link repeating Hellos: its burst of 4, then busy without a signature.
        var faults: [FaultCode?] = []
        for _ in 0..<10 { faults.append(try rig.hello(&phone, link: LinkID(1)).cleartextFault) }
        XCTAssertEqual(faults.filter { $0 == nil }.count, 4, "\(faults)")
        XCTAssertEqual(faults.filter { $0 == .busy }.count, 6)
        XCTAssertEqual(rig.signer.signatures, 4, "busy answers cost no signature")
        // Busy is not a failure: the link is not blocked, and the bucket refills (2/s).
        rig.advance(millis: 500)
        XCTAssertNil(try rig.hello(&phone, link: LinkID(1)).cleartextFault)
        XCTAssertEqual(rig.signer.signatures, 5)
    }

    func testTheCarWideBudgetBoundsSignaturesAcrossLinks() throws {
        // Pinned at 50/s, burst 50 (the default is 200/s, burst 100): the arithmetic below.
        var rig = AdmissionRig(records: [ownerRecord], configure: {
            $0.maxLinks = 1000
            $0.handshakeBudgetCarWide = HandshakeBudget(perSecond: 50, burst: 50)
        })
        // The flood: the owner's key ID from many links, at one instant.
        for n in 0..<500 {
            var phone = rig.phone(owner)
            _ = try rig.hello(&phone, link: LinkID(1000 + UInt64(n)))
        }
        XCTAssertEqual(rig.signer.signatures, 50, "the car-wide burst, no more")
        rig.advance(millis: 1000)
        for n in 0..<500 {
            var phone = rig.phone(owner)
            _ = try rig.hello(&phone, link: LinkID(2000 + UInt64(n)))
        }
        XCTAssertEqual(rig.signer.signatures, 100, "50 a second")
    }

    func testRepeatedHellosLeaveHalfTheCarWideBudgetToFreshLinks() throws {
        var rig = AdmissionRig(records: [ownerRecord], configure: {
            $0.maxLinks = 1000
            $0.handshakeBudgetCarWide = HandshakeBudget(perSecond: 50, burst: 50)
        })
        // 40 links each take their first Challenge, then keep sending Hellos.
        var phones = (0..<40).map { _ in rig.phone(owner) }
        for n in phones.indices { _ = try rig.hello(&phones[n], link: LinkID(100 + UInt64(n))) }
        XCTAssertEqual(rig.signer.signatures, 40)
        rig.advance(millis: 400) // 20 tokens back car-wide (30 left in all), 0.8 per link
        rig.advance(millis: 100) // 1 per link
        for n in phones.indices { _ = try rig.hello(&phones[n], link: LinkID(100 + UInt64(n))) }
        XCTAssertEqual(rig.signer.signatures, 40 + 10, "repeated Hellos stop at half the car-wide budget (25 left)")
        let fresh = try rig.session(owner, link: LinkID(1))
        XCTAssertNotNil(fresh.authActions, "a fresh link still gets its Challenge: \(fresh.helloActions)")
        XCTAssertEqual(rig.car.establishedLinks, [LinkID(1)])
    }

    // MARK: H1: sessions of shares never starve the owner

    func testAnOwnerHelloEndsTheOldestShareSessionWhenTheTableIsFull() throws {
        var rig = AdmissionRig(records: [ownerRecord, guestRecord], configure: { $0.maxLinks = 2 })
        let guests = [P256PrivateKey.derived("guest A"), P256PrivateKey.derived("guest B")]
        for (n, key) in guests.enumerated() {
            rig.directory.upsert(KeyRecord(publicKey: key.publicKey, role: .shared, permissions: .unlock))
            _ = try rig.session(key, link: LinkID(1 + UInt64(n)))
            rig.advance(millis: 10)
        }
        XCTAssertEqual(rig.car.establishedLinks, [LinkID(1), LinkID(2)])
        // A third guest is refused: the table is full and it is not an owner.
        XCTAssertEqual(try rig.session(guest, link: LinkID(3)).helloActions.cleartextFault, .busy)
        let owner = try rig.session(owner, link: LinkID(4))
        XCTAssertEqual(owner.helloActions.closed, [LinkID(1)], "the oldest share session ends")
        XCTAssertNotNil(owner.authActions)
        XCTAssertEqual(rig.car.establishedLinks, [LinkID(2), LinkID(4)])
    }

    func testAnOwnerIsBusyWhenTheTableHoldsOnlyOwnerSessions() throws {
        var rig = AdmissionRig(records: [ownerRecord], configure: { $0.maxLinks = 1 })
        let other = P256PrivateKey.derived("second owner")
        rig.directory.upsert(KeyRecord(publicKey: other.publicKey, role: .owner, permissions: .all))
        _ = try rig.session(other, link: LinkID(1))
        XCTAssertEqual(try rig.session(owner, link: LinkID(2)).helloActions.cleartextFault, .busy)
        XCTAssertEqual(rig.car.establishedLinks, [LinkID(1)])
    }

    func testAKeyHoldsOneSession() throws {
        var rig = AdmissionRig(records: [ownerRecord])
        _ = try rig.session(owner, link: LinkID(1))
        XCTAssertEqual(rig.car.establishedLinks, [LinkID(1)])
        let second = try XCTUnwrap(try rig.session(owner, link: LinkID(2)).authActions)
        XCTAssertEqual(second.closed, [LinkID(1)], "the older session of the same key ends")
        XCTAssertEqual(rig.car.establishedLinks, [LinkID(2)])
    }

    // MARK: what the transport asks

    func testPhasesTellTheTransportWhichLinksItMayReclaim() throws {
        var rig = AdmissionRig(records: [ownerRecord])
        XCTAssertEqual(rig.car.phase(of: LinkID(1)), .idle)
        var phone = rig.phone(owner)
        _ = try rig.hello(&phone, link: LinkID(1))
        XCTAssertEqual(rig.car.phase(of: LinkID(1)), .handshaking)
        _ = try rig.session(owner, link: LinkID(2))
        XCTAssertEqual(rig.car.phase(of: LinkID(2)), .established)
        // Reclaim order: idle 0, a link repeating Hellos 1, a phone in its handshake 2, a session never.
        XCTAssertEqual(rig.car.reclaimOrder(of: LinkID(3)), 0)
        XCTAssertEqual(rig.car.reclaimOrder(of: LinkID(1)), 2)
        _ = try rig.hello(&phone, link: LinkID(1))
        XCTAssertEqual(rig.car.reclaimOrder(of: LinkID(1)), 1)
        XCTAssertNil(rig.car.reclaimOrder(of: LinkID(2)))
    }
}

extension P256PrivateKey {
    /// A fixed key per label (tests).
    static func derived(_ label: String) -> P256PrivateKey { Fixtures.key(label) }
}

// A car that answers `busy` must recover. Once, after about 115 Hellos naming one enrolled key
// (default audit coalescing), every later Hello was answered busy for good. The whole car
// (CarService admission and reclaim, the engine's budgets, the audit batch with coalescing)
// over the in-memory link: one central sends hundreds of Hellos for the owner key in every
// shape a test client produces (complete visits, abandoned handshakes, floods of Hellos on one
// link, hang-ups mid-handshake, more links than slots); after a rest its next visit works.
import XCTest
@testable import carkey_agent
import Drivers
import Protocol

final class BusyRecoveryTests: XCTestCase {
    private let owner = try! P256PrivateKey.generate()
    private let address = "C0:FF:EE:00:00:01"

    private final class Visit {
        let link: LinkID
        var session: PhoneProtocolSession
        init(link: LinkID, session: PhoneProtocolSession) {
            self.link = link
            self.session = session
        }
    }

    private static func now() -> ProtocolTime {
        ProtocolTime(monotonicMillis: SystemClock().nowMillis(), wallSeconds: Int64(time(nil)), wallClockTrusted: true)
    }

    func testHundredsOfHellosForOneKeyThenRestAndTheNextVisitWorks() throws {
        let car = try InProcessCar(keys: [KeyRecord(publicKey: owner.publicKey, role: .owner, permissions: .all)],
                                   memoryLinks: true)
        let memory = try XCTUnwrap(car.memory)
        var busy = 0, hellos = 0
        var visits: [Visit] = []

        func newVisit() -> Visit? {
            guard let link = memory.connect(nowMillis: car.clock.monotonicMillis, peerAddress: address) else { return nil }
            let config = PhoneConfiguration(longTermKey: owner, carIdentityKey: car.identity.publicKey, vehicleID: car.vehicle)
            let visit = Visit(link: link, session: PhoneProtocolSession(configuration: config))
            visits.append(visit)
            return visit
        }
        func hello(_ visit: Visit) throws {
            hellos += 1
            memory.deliver(try visit.session.start(), from: visit.link)
        }
        /// Reads what the car sent; a Challenge is answered when `answer`.
        func drain(_ visit: Visit, answer: Bool = true) throws {
            for bytes in memory.takeSent(visit.link) {
                if let fault = try? FaultMessage.decode(bytes), fault.fault == .busy { busy += 1 }
                guard let event = try? visit.session.receive(bytes, now: Self.now()) else { continue }
                if answer, case .send(let reply) = event { memory.deliver(reply, from: visit.link) }
            }
        }

        for step in 0..<200 {
            switch step % 5 {
            case 0:  // A complete visit: session, status, hang up.
                guard let visit = newVisit() else { break }
                try hello(visit)
                for _ in 0..<20 where !visit.session.isEstablished {
                    try car.round(maxWaitMillis: 1)
                    try drain(visit)
                }
                if visit.session.isEstablished { memory.deliver(try visit.session.command(.status, now: Self.now()), from: visit.link) }
                try car.round(maxWaitMillis: 1)
                try drain(visit)
                memory.disconnect(visit.link)
            case 1:  // Abandoned: a Hello, the Challenge never answered, the link left open.
                guard let visit = newVisit() else { break }
                try hello(visit)
                try car.round(maxWaitMillis: 1)
                try drain(visit, answer: false)
            case 2:  // A flood of Hellos on one link.
                guard let visit = newVisit() else { break }
                for _ in 0..<8 { try hello(visit) }
                try car.round(maxWaitMillis: 1)
                try drain(visit, answer: false)
            case 3:  // Hang up right after answering the Challenge.
                guard let visit = newVisit() else { break }
                try hello(visit)
                try car.round(maxWaitMillis: 1)
                try drain(visit)
                memory.disconnect(visit.link)
            default:
                try car.round(maxWaitMillis: 1)
            }
            for visit in visits where memory.isOpen(visit.link) { try drain(visit, answer: false) }
        }
        XCTAssertGreaterThan(hellos, 115)
        XCTAssertGreaterThan(busy, 0, "the budget must have been met for this test to mean anything")

        // Rest: longer than the per-peer bucket's refill (4 at 2/s), the handshake deadline and
        // the challenge lifetime, with the loop running as the agent's does.
        let restUntil = SystemClock().nowMillis() + 11_000
        while SystemClock().nowMillis() < restUntil { try car.round(maxWaitMillis: 50) }
        for visit in visits where memory.isOpen(visit.link) { memory.disconnect(visit.link) }
        try car.round()

        let visit = try XCTUnwrap(newVisit(), "a slot after rest")
        busy = 0
        try hello(visit)
        try car.pump("the visit after rest is established") {
            try drain(visit)
            return visit.session.isEstablished || busy > 0
        }
        XCTAssertEqual(busy, 0, "still busy after rest")
        XCTAssertTrue(visit.session.isEstablished)
    }
}

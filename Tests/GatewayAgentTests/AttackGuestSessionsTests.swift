// Issue 14: lock-only guests holding a session on every link slot kept the owner out (0 of
// 60 attempts). Guests may hold every slot, but an owner's Hello takes the oldest guest
// session's slot (rule H1) and the newcomer is heard out in the spare slot meanwhile. The
// whole agent in process (CarService, engine, store, actuator) over the in-memory link.
import XCTest
@testable import carkey_agent
import Drivers
import Protocol
import TestHarness

final class AttackGuestSessionsTests: XCTestCase {
    func testGuestsHoldingEverySlotNeverKeepTheOwnerOut() throws {
        let owner = try P256PrivateKey.generate()
        let guests = try (0..<8).map { _ in try P256PrivateKey.generate() }
        let car = try InProcessCar(keys: [KeyRecord(publicKey: owner.publicKey, role: .owner, permissions: .all)]
                                   + guests.map { KeyRecord(publicKey: $0.publicKey, role: .shared, permissions: [.lock]) },
                                   memoryLinks: true)
        let memory = try XCTUnwrap(car.memory)
        var held: [MemoryPhone?] = Array(repeating: nil, count: guests.count)
        var guestSessions = 0

        /// Every guest whose session was ended gets a new one, as an attacker would.
        func refillGuests() throws {
            for index in guests.indices where held[index].map({ !memory.isOpen($0.link) }) ?? true {
                guard let phone = try? MemoryPhone(server: memory, key: guests[index], car: car.identity.publicKey,
                                                   vehicle: car.vehicle) else { continue }
                try phone.sendHello()
                try car.pump("guest \(index) in a session") {
                    _ = try phone.drain()
                    return phone.isEstablished || !memory.isOpen(phone.link)
                }
                if phone.isEstablished {
                    held[index] = phone
                    guestSessions += 1
                }
            }
        }

        try refillGuests()
        XCTAssertEqual(held.compactMap { $0 }.filter { memory.isOpen($0.link) }.count, 8, "guests hold every slot")
        let attempts = 10 * AttackReport.scale
        var successes = 0
        for _ in 0..<attempts {
            try refillGuests()
            let phone = try XCTUnwrap(try? MemoryPhone(server: memory, key: owner, car: car.identity.publicKey, vehicle: car.vehicle),
                                      "the owner's connection is accepted into the spare slot")
            try phone.sendHello()
            try car.pump("owner answered") {
                _ = try phone.drain()
                return phone.isEstablished || !memory.isOpen(phone.link)
            }
            if phone.isEstablished { successes += 1 }
            memory.disconnect(phone.link)
            try car.round()
        }
        let unauthorised = car.moves("unlock")
        AttackReport.emit(AttackResult(attack: "link.guest-sessions", tries: guestSessions, ownerAttempts: attempts,
                                       ownerSuccesses: successes, unauthorised: unauthorised,
                                       note: "8 lock-only guests re-establishing a session on every slot"))
        XCTAssertEqual(successes, attempts, "an owner Hello always takes a guest's slot")
        XCTAssertEqual(unauthorised, 0)
        XCTAssertGreaterThan(guestSessions, 8, "guests were evicted and came back")
    }
}

// CarService over the in-memory link server: the whole car (engine, keychain, store, audit
// batch, actuation) with phones that are plain values, no sockets. Shows the link seam: the
// same service and loop as on the Unix socket or BLE, and link facts (RSSI) reaching the car.
import XCTest
@testable import carkey_agent
import Drivers
import Protocol

/// A phone on the in-memory link: the reference phone session, messages in and out directly.
final class MemoryPhone {
    let link: LinkID
    private let server: MemoryLinkServer
    private var session: PhoneProtocolSession

    init(server: MemoryLinkServer, key: P256PrivateKey, car: P256PublicKey, vehicle: VehicleID, rssi: Int? = nil) throws {
        self.server = server
        link = try XCTUnwrap(server.connect(rssi: rssi), "no free link slot")
        session = PhoneProtocolSession(configuration: PhoneConfiguration(longTermKey: key, carIdentityKey: car, vehicleID: vehicle))
    }

    var isEstablished: Bool { session.isEstablished }

    func sendHello() throws { server.deliver(try session.start(), from: link) }
    func sendCommand(_ command: CommandCode) throws { server.deliver(try session.command(command, now: Self.now()), from: link) }

    /// Reads everything the car sent; answers a Challenge at once; returns the phone's events.
    func drain() throws -> [PhoneEvent] {
        try server.takeSent(link).map { bytes in
            let event = try session.receive(bytes, now: Self.now())
            if case .send(let answer) = event { server.deliver(answer, from: link) }
            return event
        }
    }

    private static func now() -> ProtocolTime {
        ProtocolTime(monotonicMillis: SystemClock().nowMillis(), wallSeconds: Int64(time(nil)), wallClockTrusted: true)
    }
}

final class MemoryLinkCarTests: XCTestCase {
    private let owner = try! P256PrivateKey.generate()

    private func makeCar() throws -> InProcessCar {
        try InProcessCar(keys: [KeyRecord(publicKey: owner.publicKey, role: .owner, permissions: .all)],
                         memoryLinks: true)
    }

    func testUnlockOverTheInMemoryLinkMovesTheActuatorAfterTheDecisionIsStored() throws {
        let car = try makeCar()
        let memory = try XCTUnwrap(car.memory)
        let phone = try MemoryPhone(server: memory, key: owner, car: car.identity.publicKey, vehicle: car.vehicle, rssi: -58)
        try phone.sendHello()
        var events: [PhoneEvent] = []
        try car.pump("session established") {
            events += try phone.drain()
            return phone.isEstablished
        }
        XCTAssertEqual(car.server.facts(of: phone.link)?.rssi, -58, "the link's RSSI reaches the car")
        XCTAssertEqual(car.server.facts(of: phone.link)?.transport, "memory")
        let snapshot = car.service.linkSnapshot
        XCTAssertEqual(snapshot.links.map(\.id), [phone.link])
        let line = LinkCommands.line(try XCTUnwrap(snapshot.links.first), nowMillis: 5000)
        XCTAssertTrue(line.contains("rssi -58 dBm") && line.hasSuffix("session"), "console links line: \(line)")

        try phone.sendCommand(.unlock)
        var response: ResponseBody?
        try car.pump("unlock answered") {
            for case .response(let body) in try phone.drain() { response = body }
            return response != nil
        }
        XCTAssertEqual(response?.result, 0, "unlock ok")
        XCTAssertGreaterThan(car.moves("unlock"), 0, "the unlock line pulsed")
        XCTAssertEqual(try car.rows(of: owner).map { "\($0.event.action) \($0.event.result)" }.last, "unlock ok",
                       "the decision is in the store")
    }

    func testAPhoneThatVanishesEndsItsSessionAndFreesTheSlot() throws {
        let car = try makeCar()
        let memory = try XCTUnwrap(car.memory)
        let phones = try (0..<memory.maxConnections).map { _ in
            try MemoryPhone(server: memory, key: owner, car: car.identity.publicKey, vehicle: car.vehicle)
        }
        XCTAssertNotNil(memory.connect(), "the spare slot takes one more, for CarService to decide")
        XCTAssertNil(memory.connect(), "two more than the limit are refused")
        try car.round()
        memory.disconnect(phones[0].link, reason: .linkLost)
        try car.pump("the car sees the link lost") { !car.server.isOpen(phones[0].link) && memory.connect() != nil }
    }
}

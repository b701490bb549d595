// Conformance mode inside the agent: the same misbehaving phones against two cars, one with the
// monitor and one without, must meet the same decisions (it only watches); and the report's
// control-socket answers must fit the socket's lines.
import XCTest
import Drivers
import Protocol
@testable import carkey_agent
#if canImport(Glibc)
import Glibc
#endif

final class ConformanceMonitorTests: XCTestCase {
    private let owner = try! P256PrivateKey.generate()

    private func makeCar(conformance: Bool) throws -> InProcessCar {
        let car = try InProcessCar(keys: [KeyRecord(publicKey: owner.publicKey, role: .owner, permissions: .all)], memoryLinks: true)
        if conformance {
            car.service.conformance = ConformanceMonitor(configuration: CarProtocolConfiguration(vehicleID: car.vehicle),
                                                         handshakeDeadlineMillis: car.service.handshakeDeadlineMillis,
                                                         log: AgentLog(prefix: "test"))
        }
        return car
    }

    private static func now() -> ProtocolTime {
        ProtocolTime(monotonicMillis: SystemClock().nowMillis(), wallSeconds: Int64(time(nil)), wallClockTrusted: true)
    }

    /// Misbehaving phones against `car`: what the car decided (its event rows) and sent (the
    /// type of each message, and the code of each cleartext Fault), link by link.
    private func misbehave(at car: InProcessCar) throws -> (rows: [String], sent: [[String]]) {
        let memory = try XCTUnwrap(car.memory)
        var links: [LinkID] = []
        func settle() throws { for _ in 0..<20 { try car.round(maxWaitMillis: 1) } }

        // A Command record and a broken AuthResponse header before any Hello.
        let raw = try XCTUnwrap(memory.connect())
        links.append(raw)
        memory.deliver(Bytes(hex: "1001" + "0000000000000001" + "010000000a00" + String(repeating: "00", count: 16))!, from: raw)
        memory.deliver(Bytes(hex: "aacc01")!, from: raw)
        try settle()

        // A session, one status command, then the same record again.
        let link = try XCTUnwrap(memory.connect())
        links.append(link)
        var phone = PhoneProtocolSession(configuration: PhoneConfiguration(longTermKey: owner, carIdentityKey: car.identity.publicKey,
                                                                           vehicleID: car.vehicle))
        memory.deliver(try phone.start(), from: link)
        try car.pump("session") {
            for bytes in memory.takeSent(link) {
                if case .send(let answer) = try phone.receive(bytes, now: Self.now()) { memory.deliver(answer, from: link) }
            }
            return phone.isEstablished
        }
        let command = try phone.command(.status, now: Self.now())
        memory.deliver(command, from: link)
        try settle()
        memory.deliver(command, from: link)
        try settle()

        // A Hello storm on a third link, then a framing error ends it.
        let storm = try XCTUnwrap(memory.connect())
        links.append(storm)
        var stormer = PhoneProtocolSession(configuration: phone.configuration)
        for _ in 0..<6 { memory.deliver(try stormer.start(), from: storm) }
        try settle()
        memory.disconnect(storm, reason: .malformedFrame("empty frame"))
        try settle()

        let rows = try car.store.events(since: 0, limit: 1000).map { "\($0.event.action) \($0.event.result) \($0.event.fault?.name ?? "-")" }
        // The first round's traffic was taken while establishing; the rest is what the car sent.
        let sent = links.map { link in
            memory.takeSent(link).map { bytes -> String in
                if let fault = try? FaultMessage.decode(bytes) { return "fault \(fault.code)" }
                return "type \(bytes.first ?? 0)"
            }
        }
        return (rows, sent)
    }

    func testConformanceModeChangesNoDecision() throws {
        let plain = try makeCar(conformance: false)
        let watched = try makeCar(conformance: true)
        let without = try misbehave(at: plain)
        let with = try misbehave(at: watched)
        XCTAssertEqual(with.rows, without.rows)
        XCTAssertEqual(with.sent, without.sent)
        XCTAssertTrue(without.rows.contains("message refused unexpectedMessage"), "\(without.rows)")
        XCTAssertTrue(without.rows.contains("message refused replayedCounter") || without.rows.contains("status refused replayedCounter"),
                      "\(without.rows)")

        let report = try XCTUnwrap(watched.service.conformance).textLines(nowMillis: watched.clock.monotonicMillis)
        for rule in ["R2", "R1", "S4", "H6", "H1a", "16-framing"] {
            XCTAssertTrue(report.contains { $0.contains(" deviation \(rule) ") }, "\(rule) missing: \(report)")
        }
    }

    func testTheAnswersFitTheControlSocket() throws {
        var configuration = CarProtocolConfiguration(vehicleID: try VehicleID("OCK-UNIT-0009"))
        configuration.handshakeBudgetPerPeer = HandshakeBudget(perSecond: 1, burst: 1)
        let monitor = ConformanceMonitor(configuration: configuration, handshakeDeadlineMillis: 3000, log: AgentLog(prefix: "test"))
        let time = ProtocolTime(monotonicMillis: 1000, wallSeconds: 1_767_225_600, wallClockTrusted: true)
        for index in 0..<ConformanceObserver.endedReportsKept + 2 {
            let link = LinkID(UInt64(index + 1))
            monitor.opened(link, transport: "ble", now: time)
            monitor.message([0x7E], on: link, now: time, answer: [])
            monitor.ended(link, .framing(String(repeating: "fragment out of sequence ", count: 20)), now: time)
        }
        let text = monitor.textLines(nowMillis: 2000)
        let json = monitor.jsonLines(nowMillis: 2000)
        XCTAssertLessThanOrEqual(text.count + 1, ControlClient.maxResponseLines)
        XCTAssertLessThanOrEqual(json.count + 1, ControlClient.maxResponseLines)
        for line in text + json { XCTAssertLessThanOrEqual(line.utf8.count, ControlProtocol.maxLineBytes - 1, line) }
        XCTAssertTrue(json.contains { $0.contains("...\"}") }, "long details are cut, not dropped")

        let document = try XCTUnwrap(ConformanceJSON.document(json))
        guard case .object(let parsed) = try JSONTree.parse(document.bytes), case .array(let links)? = parsed["links"] else {
            return XCTFail(document.serialized)
        }
        XCTAssertEqual(links.count, ConformanceObserver.endedReportsKept)
        XCTAssertNil(ConformanceJSON.document(["{\"type\":\"check\"}"]), "a check before its link is not a report")
        XCTAssertNil(ConformanceJSON.document(["not json"]))
    }
}

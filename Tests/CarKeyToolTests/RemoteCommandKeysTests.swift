// Who may sign remote commands, end to end through the agent and a real broker: a fleet key
// from the config file, a share without the remote permission, a revoked signer; the UUID
// table across a restart; and the retained revocation list (catch-up after being offline,
// version rollback refused).
import XCTest
import Drivers
import Protocol
import TestHarness
#if canImport(Glibc)
import Glibc
#endif

final class RemoteCommandKeysTests: XCTestCase {
    private let vehicle = AgentHarness.vehicle

    private func start(_ car: AgentHarness, broker: MosquittoBroker, remote: String = #"{"allowUnlock": true}"#) throws -> BackgroundProcess {
        let config = car.folder + "/agent.json"
        try #"{"remote": \#(remote)}"#.write(toFile: config, atomically: true, encoding: .utf8)
        let agent = try car.start(clockSync: "yes", ["--config", config, "--mqtt", broker.url])
        XCTAssertTrue(agent.wait(timeoutSeconds: 20) { agent.stderr.contains("cloud: connected") }, agent.stderr)
        return agent
    }

    private func send(_ broker: MosquittoBroker, key: String, _ action: String) throws -> ProcessResult {
        try Subprocess.run("carkey", ["command", "send", "--url", broker.url, "--key", key, "--vehicle", vehicle,
                                      "--command", action, "--wait-result", "--timeout", "15"])
    }

    private func pulses(_ agent: BackgroundProcess) -> Int { agent.stderr.components(separatedBy: " pulsed on ").count - 1 }

    private func loadKey(_ path: String) throws -> P256PrivateKey {
        try P256PrivateKey(pemRepresentation: try String(contentsOfFile: path, encoding: .utf8))
    }

    func testFleetKeyFromConfigWorksAndShareWithoutRemoteAndRevokedSignerAreRefused() throws {
        let broker = try MosquittoBroker()
        try broker.start()
        let car = AgentHarness()
        let fleet = try car.keygen("fleet")
        let agent = try start(car, broker: broker, remote: #"{"allowUnlock": true, "fleetKeys": ["\#(fleet.publicHex)"]}"#)
        let owner = try car.enrollOwner()

        let byFleet = try send(broker, key: fleet.path, "unlock")
        XCTAssertEqual(byFleet.status, 0, byFleet.stdout + agent.stderr)
        XCTAssertTrue(agent.wait(timeoutSeconds: 5) { self.pulses(agent) == 1 }, agent.stderr)

        // A share holder with unlock-only (no remote): remembered after its first visit, refused remotely.
        let holder = try car.keygen("holder")
        let sharePath = car.folder + "/holder.share"
        let issued = try Subprocess.run("carkey", ["share", "--owner", owner.path, "--holder", holder.publicHex, "--vehicle", vehicle,
                                                   "--permissions", "unlock-only", "--not-after", "2099-01-01T00:00:00Z", "--out", sharePath])
        XCTAssertEqual(issued.status, 0, issued.stderr)
        let visit = try car.phone("status", key: holder.path, pinned: true, extra: ["--share", sharePath])
        XCTAssertEqual(visit.status, 0, visit.stdout + visit.stderr)
        let byShare = try send(broker, key: holder.path, "unlock")
        XCTAssertEqual(byShare.status, 1)
        XCTAssertTrue(byShare.stdout.contains("insufficientPermission"), byShare.stdout)

        // The owner revokes the fleet key by key ID: refused at once.
        let revocation = car.folder + "/fleet.rev"
        let revoke = try Subprocess.run("carkey", ["revoke", "--owner", owner.path, "--vehicle", vehicle, "--key", fleet.publicHex, "--out", revocation])
        XCTAssertEqual(revoke.status, 0, revoke.stderr)
        let revoked = try car.phone("revoke", key: owner.path, extra: ["--object", revocation])
        XCTAssertEqual(revoked.status, 0, revoked.stdout + revoked.stderr)
        let afterRevocation = try send(broker, key: fleet.path, "lock")
        XCTAssertEqual(afterRevocation.status, 1)
        XCTAssertTrue(afterRevocation.stdout.contains(#""name":"revoked""#), afterRevocation.stdout)
        XCTAssertEqual(pulses(agent), 1, "nothing moved after the fleet unlock: \(agent.stderr)")
        car.stop()
    }

    func testASeenCommandStaysADuplicateAfterARestart() throws {
        let broker = try MosquittoBroker()
        try broker.start()
        let car = AgentHarness()
        var agent = try start(car, broker: broker)
        let owner = try car.enrollOwner()
        let results = try CloudTestSubscriber(url: broker.url, filter: "vehicles/\(vehicle)/results")
        let signed = try Subprocess.run("carkey", ["command", "sign", "--key", owner.path, "--vehicle", vehicle, "--command", "lock", "--expires-in", "60"])
        let envelope = signed.stdout.trimmingCharacters(in: .whitespacesAndNewlines)
        let body = try XCTUnwrap(CloudTestSubscriber.field("body", in: Array(envelope.utf8)))
        XCTAssertEqual(system("mosquitto_pub -h 127.0.0.1 -p \(broker.port) -q 1 -t vehicles/\(vehicle)/cmd -m '\(envelope)'"), 0)
        XCTAssertTrue(results.wait(seconds: 10) { results.received.count == 1 }, agent.stderr)
        car.stop()
        agent = try start(car, broker: broker)
        let again = #"{"id":"\#(UUIDv4.makeForTests())","type":"command","body":"\#(body)"}"#
        XCTAssertEqual(system("mosquitto_pub -h 127.0.0.1 -p \(broker.port) -q 2 -t vehicles/\(vehicle)/cmd -m '\(again)'"), 0)
        XCTAssertTrue(results.wait(seconds: 10) { results.received.count == 2 }, agent.stderr)
        let last = String(decoding: results.received[1].payload, as: UTF8.self)
        XCTAssertTrue(last.contains("replayedCounter"), last)
        XCTAssertEqual(pulses(agent), 0)
        // docs/cloud.md ("A repeated command"): the answer is its example, member for member.
        let doc = try String(contentsOfFile: #filePath.components(separatedBy: "/Tests/")[0] + "/docs/cloud.md", encoding: .utf8)
        let example = try XCTUnwrap(doc.split(separator: "\n").first { $0.hasPrefix("{") && $0.contains(#""name":"replayedCounter""#) },
                                    "docs/cloud.md has no replayed-command example")
        guard case .object(let documented) = try JSONTree.parse(Bytes(example.utf8)),
              case .object(let answer) = try JSONTree.parse(results.received[1].payload) else { return XCTFail(last) }
        XCTAssertEqual(Set(answer.keys), Set(documented.keys), last)
        for name in ["type", "result", "fault", "action"] { XCTAssertEqual(answer[name], documented[name], name) }
        let first = try JSONTree.parse(results.received[0].payload)
        guard case .object(let firstFields) = first else { return XCTFail("\(first)") }
        XCTAssertEqual(answer["command"], firstFields["command"], "the repeat names the command the first result answered")
        XCTAssertEqual(firstFields["result"], .string("ok"), "the first result carries the outcome")
        car.stop()
    }

    func testRevocationListCatchesUpAfterBeingOfflineAndRefusesRollback() throws {
        let broker = try MosquittoBroker()
        try broker.start()
        let car = AgentHarness()
        var agent = try start(car, broker: broker)
        let owner = try car.enrollOwner()
        let second = try car.enrollOwner("second")
        let results = try CloudTestSubscriber(url: broker.url, filter: "vehicles/\(vehicle)/results")
        car.stop()

        // While the car is offline, the owner publishes (retained) a list revoking the second owner.
        let ownerKey = try loadKey(owner.path)
        let vehicleID = try VehicleID(vehicle)
        let secondID = KeyID(publicKey: try P256PublicKey(sec1: try XCTUnwrap(Bytes(hex: second.publicHex))))
        let revocation = try Revocation.issue(by: ownerKey, vehicleID: vehicleID, target: .key(secondID), issuedAt: 1_760_000_000)
        let list2 = try RevocationList.issue(by: ownerKey, vehicleID: vehicleID, listVersion: 2, issuedAt: 1_760_000_000, revocations: [revocation])
        let topic = "vehicles/\(vehicle)/revocations"
        func publish(_ list: RevocationList) {
            let envelope = #"{"id":"\#(UUIDv4.makeForTests())","type":"revocationList","body":"\#(list.encoded().hexString)"}"#
            XCTAssertEqual(system("mosquitto_pub -h 127.0.0.1 -p \(broker.port) -q 1 -r -t \(topic) -m '\(envelope)'"), 0)
        }
        publish(list2)
        agent = try start(car, broker: broker)
        XCTAssertTrue(results.wait(seconds: 10) { results.received.count == 1 }, agent.stderr)
        XCTAssertTrue(String(decoding: results.received[0].payload, as: UTF8.self).contains(#""type":"revocationList","result":"ok""#))
        let status = try car.phone("status", key: second.path)
        XCTAssertTrue(status.stdout.contains("revoked"), "the second owner is revoked: \(status.stdout)")

        // An older version is refused, whatever it says.
        let list1 = try RevocationList.issue(by: ownerKey, vehicleID: vehicleID, listVersion: 1, issuedAt: 1_760_000_000, revocations: [])
        publish(list1)
        XCTAssertTrue(results.wait(seconds: 10) { results.received.count == 2 }, agent.stderr)
        let refused = String(decoding: results.received[1].payload, as: UTF8.self)
        XCTAssertTrue(refused.contains(#""result":"refused""#) && refused.contains("outOfOrderCounter"), refused)
        XCTAssertTrue(try car.events().contains { $0.event.action == "revocation-list" && $0.event.result == "refused" })
        // Clear the retained message so the broker's store does not leak into other tests.
        XCTAssertEqual(system("mosquitto_pub -h 127.0.0.1 -p \(broker.port) -q 1 -r -n -t \(topic)"), 0)
        car.stop()
    }
}

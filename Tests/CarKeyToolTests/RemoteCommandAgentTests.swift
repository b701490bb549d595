// Signed remote commands end to end: `carkey-agent run --simulate --mqtt` against a real
// mosquitto broker, an owner enrolled by pairing, commands signed and sent by `carkey command`.
// A refused command moves nothing (no GPIO pulse in the agent's log) and is answered and
// written to the event log; a good one pulses once, whatever the number of deliveries.
import XCTest
import Drivers
import Protocol
import TestHarness
#if canImport(Glibc)
import Glibc
#endif

final class RemoteCommandAgentTests: XCTestCase {
    private let vehicle = AgentHarness.vehicle

    private func start(_ car: AgentHarness, broker: MosquittoBroker, remote: String) throws -> BackgroundProcess {
        let config = car.folder + "/agent.json"
        try #"{"remote": \#(remote)}"#.write(toFile: config, atomically: true, encoding: .utf8)
        let agent = try car.start(clockSync: "yes", ["--config", config, "--mqtt", broker.url])
        XCTAssertTrue(agent.wait(timeoutSeconds: 20) { agent.stderr.contains("cloud: connected") }, agent.stderr)
        return agent
    }

    private func sign(_ key: String, _ action: String, extra: [String] = []) throws -> String {
        let result = try Subprocess.run("carkey", ["command", "sign", "--key", key, "--vehicle", vehicle, "--command", action] + extra)
        XCTAssertEqual(result.status, 0, result.stderr)
        return result.stdout.trimmingCharacters(in: .whitespacesAndNewlines)
    }

    private func publish(_ broker: MosquittoBroker, _ envelope: String) {
        XCTAssertEqual(system("mosquitto_pub -h 127.0.0.1 -p \(broker.port) -q 1 -t vehicles/\(vehicle)/cmd -m '\(envelope)'"), 0)
    }

    private func pulses(_ agent: BackgroundProcess) -> Int { agent.stderr.components(separatedBy: " pulsed on ").count - 1 }

    func testOwnerUnlockWorksOnceAndReplayedAlteredExpiredWrongVehicleAndUnknownAreRefused() throws {
        let broker = try MosquittoBroker()
        try broker.start()
        let car = AgentHarness()
        // The owner enrols over the simulated link before the remote policy matters.
        let agent = try start(car, broker: broker, remote: #"{"allowUnlock": true}"#)
        let owner = try car.enrollOwner()
        let results = try CloudTestSubscriber(url: broker.url, filter: "vehicles/\(vehicle)/results")

        // A good owner-signed unlock, via the tool end to end.
        let sent = try Subprocess.run("carkey", ["command", "send", "--url", broker.url, "--key", owner.path, "--vehicle", vehicle,
                                                 "--command", "unlock", "--wait-result", "--timeout", "15"])
        XCTAssertEqual(sent.status, 0, sent.stdout + sent.stderr + agent.stderr)
        XCTAssertTrue(sent.stdout.contains(#""result":"ok""#), sent.stdout)
        XCTAssertTrue(agent.wait(timeoutSeconds: 5) { self.pulses(agent) == 1 }, agent.stderr)

        // The same signed command in a new envelope: a duplicate, nothing moves.
        let good = try sign(owner.path, "lock")
        publish(broker, good)
        XCTAssertTrue(results.wait(seconds: 10) { results.received.count >= 2 }, agent.stderr)
        XCTAssertTrue(agent.wait(timeoutSeconds: 5) { self.pulses(agent) == 2 }, agent.stderr)
        let body = try XCTUnwrap(CloudTestSubscriber.field("body", in: Array(good.utf8)))
        publish(broker, #"{"id":"\#(UUIDv4.makeForTests())","type":"command","body":"\#(body)"}"#)
        // Altered (one byte), expired, wrong vehicle, unknown signer, unsigned.
        var altered = Array(body)
        altered[altered.count - 1] = altered[altered.count - 1] == "0" ? "1" : "0"
        publish(broker, #"{"id":"\#(UUIDv4.makeForTests())","type":"command","body":"\#(String(altered))"}"#)
        publish(broker, try sign(owner.path, "unlock", extra: ["--issued-at", "2020-01-01T00:00:00Z"]))
        let other = try car.keygen("stranger")
        publish(broker, try sign(other.path, "unlock"))
        let wrong = try Subprocess.run("carkey", ["command", "sign", "--key", owner.path, "--vehicle", "OCK-SIM-0002", "--command", "unlock"])
        publish(broker, wrong.stdout.trimmingCharacters(in: .whitespacesAndNewlines))
        publish(broker, #"{"id":"\#(UUIDv4.makeForTests())","type":"command","body":"00"}"#)
        XCTAssertTrue(results.wait(seconds: 15) { results.received.count >= 8 }, "\(results.received.count) results: \(agent.stderr)")
        let answers = results.received.map { String(decoding: $0.payload, as: UTF8.self) }
        for name in ["replayedCounter", "badSignature", "expired", "unknownKey", "wrongVehicle", "malformedMessage"] {
            XCTAssertTrue(answers.contains { $0.contains(#""result":"refused","fault":{"code":"#) && $0.contains(#""name":"\#(name)""#) },
                          "\(name) in \(answers)")
        }
        _ = results.wait(seconds: 1) { false }
        XCTAssertEqual(pulses(agent), 2, "only the two good commands moved a line: \(agent.stderr)")
        let refusals = try car.events().filter { ($0.event.detailJSON ?? "").contains("remoteCommandRefused") }
        XCTAssertEqual(refusals.count, 6, "one event row per refusal")
        car.stop()
    }

    func testRemoteUnlockIsOffByDefaultAndAutoRelockLocksAgain() throws {
        let broker = try MosquittoBroker()
        try broker.start()
        let car = AgentHarness()
        let agent = try start(car, broker: broker, remote: #"{"autoRelockSeconds": 1}"#)
        let owner = try car.enrollOwner()
        let refused = try Subprocess.run("carkey", ["command", "send", "--url", broker.url, "--key", owner.path, "--vehicle", vehicle,
                                                    "--command", "unlock", "--wait-result", "--timeout", "15"])
        XCTAssertEqual(refused.status, 1)
        XCTAssertTrue(refused.stdout.contains("insufficientPermission"), refused.stdout)
        XCTAssertEqual(pulses(agent), 0)
        car.stop()

        let again = try start(car, broker: broker, remote: #"{"allowUnlock": true, "autoRelockSeconds": 1}"#)
        let ok = try Subprocess.run("carkey", ["command", "send", "--url", broker.url, "--key", owner.path, "--vehicle", vehicle,
                                               "--command", "unlock", "--wait-result", "--timeout", "15"])
        XCTAssertEqual(ok.status, 0, ok.stdout + again.stderr)
        XCTAssertTrue(again.wait(timeoutSeconds: 10) { again.stderr.contains("remote: auto-relock after") }, again.stderr)
        XCTAssertEqual(pulses(again), 2, "the unlock, then the relock: \(again.stderr)")
        car.stop()
    }
}

extension UUIDv4 {
    static func makeForTests() -> String { (try? make()) ?? "00000000-0000-4000-8000-000000000000" }
}

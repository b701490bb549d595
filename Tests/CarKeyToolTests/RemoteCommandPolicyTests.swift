// Remote-command policy and fleet key grants end to end: service mode on the console refuses
// remote commands; a door opened after a remote unlock cancels the auto-relock; an owner
// enrolls a fleet key from the cloud, the fleet key rotates itself, and the old one is refused.
import XCTest
import Drivers
import Protocol
import TestHarness
#if canImport(Glibc)
import Glibc
#endif

final class RemoteCommandPolicyTests: XCTestCase {
    static let pin = "432198"
    private let vehicle = AgentHarness.vehicle

    private func start(_ car: AgentHarness, broker: MosquittoBroker, remote: String) throws -> (BackgroundProcess, ConsoleClient) {
        let config = car.folder + "/agent.json"
        try Subprocess.write(#"{"service": {"pin": "\#(Self.pin)", "timeoutSeconds": 60}, "console": {"tty": "pty"}, "remote": \#(remote)}"#, to: config)
        chmod(config, 0o600)
        let agent = try car.start(clockSync: "yes", ["--config", config, "--mqtt", broker.url])
        XCTAssertTrue(agent.wait(timeoutSeconds: 20) { agent.stderr.contains("cloud: connected") }, agent.stderr)
        let prefix = "carkey-agent: console on "
        let line = agent.stderr.split(separator: "\n").first { $0.hasPrefix(prefix) }
        let console = try ConsoleClient(path: String(try XCTUnwrap(line, agent.stderr).dropFirst(prefix.count)))
        try console.sync()
        return (agent, console)
    }

    private func send(_ broker: MosquittoBroker, key: String, _ action: String) throws -> ProcessResult {
        try Subprocess.run("carkey", ["command", "send", "--url", broker.url, "--key", key, "--vehicle", vehicle,
                                      "--command", action, "--wait-result", "--timeout", "15"])
    }

    private func pulses(_ agent: BackgroundProcess) -> Int { agent.stderr.components(separatedBy: " pulsed on ").count - 1 }

    func testServiceModeRefusesAndAnOpenedDoorCancelsTheAutoRelock() throws {
        let broker = try MosquittoBroker()
        try broker.start()
        let car = AgentHarness()
        let (agent, console) = try start(car, broker: broker, remote: #"{"allowUnlock": true, "autoRelockSeconds": 2}"#)
        let owner = try car.enrollOwner()
        XCTAssertTrue(try console.command("service on \(Self.pin)").contains("service mode: on"))
        let refused = try send(broker, key: owner.path, "unlock")
        XCTAssertEqual(refused.status, 1)
        XCTAssertTrue(refused.stdout.contains(#""name":"busy""#), refused.stdout)
        XCTAssertEqual(pulses(agent), 0)
        _ = try console.command("service off")

        let unlocked = try send(broker, key: owner.path, "unlock")
        XCTAssertEqual(unlocked.status, 0, unlocked.stdout + agent.stderr)
        XCTAssertTrue(try console.command("sim door open").contains("sim: door open"))
        XCTAssertTrue(agent.wait(timeoutSeconds: 5) { agent.stderr.contains("auto-relock cancelled") }, agent.stderr)
        _ = agent.wait(timeoutSeconds: 3) { false }
        XCTAssertEqual(pulses(agent), 1, "no relock after the door opened: \(agent.stderr)")
        XCTAssertFalse(agent.stderr.contains("remote: auto-relock after"))
        car.stop()
    }

    func testOwnerEnrollsAFleetKeyFromTheCloudWhichRotatesAndTheOldKeyIsRefused() throws {
        let broker = try MosquittoBroker()
        try broker.start()
        let car = AgentHarness()
        let (agent, _) = try start(car, broker: broker, remote: #"{"allowUnlock": true}"#)
        let owner = try car.enrollOwner()
        let ownerKey = try P256PrivateKey(pemRepresentation: try String(contentsOfFile: owner.path, encoding: .utf8))
        let fleet = try car.keygen("fleet")
        let fleetKey = try P256PrivateKey(pemRepresentation: try String(contentsOfFile: fleet.path, encoding: .utf8))
        let results = try CloudTestSubscriber(url: broker.url, filter: "vehicles/\(vehicle)/results")
        func grant(_ signer: P256PrivateKey, _ key: P256PublicKey) throws {
            let body = try FleetKeyGrant.issue(by: signer, vehicleID: try VehicleID(vehicle), fleetKey: key, issuedAt: 1_760_000_000).encoded()
            let envelope = #"{"id":"\#(UUIDv4.makeForTests())","type":"fleetKey","body":"\#(body.hexString)"}"#
            let before = results.received.count
            XCTAssertEqual(system("mosquitto_pub -h 127.0.0.1 -p \(broker.port) -q 1 -t vehicles/\(vehicle)/cmd -m '\(envelope)'"), 0)
            XCTAssertTrue(results.wait(seconds: 10) { results.received.count > before }, agent.stderr)
            let answer = String(decoding: results.received[before].payload, as: UTF8.self)
            XCTAssertTrue(answer.contains(#""type":"fleetKey","result":"ok""#), answer)
        }
        XCTAssertEqual(try send(broker, key: fleet.path, "lock").status, 1, "not a signer before the grant")
        try grant(ownerKey, fleetKey.publicKey)
        XCTAssertEqual(try send(broker, key: fleet.path, "lock").status, 0, agent.stderr)

        let next = try car.keygen("fleet-next")
        try grant(fleetKey, try P256PrivateKey(pemRepresentation: try String(contentsOfFile: next.path, encoding: .utf8)).publicKey)
        let old = try send(broker, key: fleet.path, "lock")
        XCTAssertEqual(old.status, 1)
        XCTAssertTrue(old.stdout.contains("unknownKey"), old.stdout)
        XCTAssertEqual(try send(broker, key: next.path, "unlock").status, 0, agent.stderr)
        car.stop()

        // Across a restart: the rotated key still signs, the retired one still does not.
        let (again, _) = try start(car, broker: broker, remote: #"{"allowUnlock": true}"#)
        XCTAssertEqual(try send(broker, key: next.path, "lock").status, 0, again.stderr)
        XCTAssertEqual(try send(broker, key: fleet.path, "lock").status, 1)
        car.stop()
    }
}

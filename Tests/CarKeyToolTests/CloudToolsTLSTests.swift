// `carkey command send` and `carkey audit verify` reach the broker docs/cloud.md tells
// operators to run: TLS with a client certificate, with the agent's flag names (--mqtt-ca,
// --mqtt-cert, --mqtt-key). A live audit check covers what it heard once the car is asked for a
// checkpoint (`carkey-agent checkpoint`), and an empty stream is "nothing verified", exit 1.
import XCTest
import Drivers
import TestHarness

final class CloudToolsTLSTests: XCTestCase {
    func testCommandSendAndAuditVerifyOverTLSWithAClientCertificate() throws {
        let broker = try MosquittoBroker(tls: true)
        try broker.start()
        let pki = try XCTUnwrap(broker.pki)
        let tls = ["--mqtt-ca", pki.caFile, "--mqtt-cert", pki.clientCertificate, "--mqtt-key", pki.clientKey]
        let car = AgentHarness()
        let agent = try car.start(clockSync: "yes", ["--mqtt", broker.url] + tls)
        let owner = try car.enrollOwner()
        XCTAssertTrue(agent.wait(timeoutSeconds: 20) { agent.stderr.contains("cloud: connected") }, agent.stderr)

        // The listener first: events are not retained.
        let verify = try BackgroundProcess("carkey", ["audit", "verify", "--mqtt", broker.url] + tls
                                           + ["--vehicle", AgentHarness.vehicle, "--car-key", car.carKeyArgument, "--seconds", "6"])
        usleep(1_000_000)
        let sent = try Subprocess.run("carkey", ["command", "send", "--mqtt", broker.url] + tls
                                      + ["--key", owner.path, "--vehicle", AgentHarness.vehicle, "--command", "lock", "--wait-result"])
        XCTAssertEqual(sent.status, 0, sent.stdout + sent.stderr)
        XCTAssertTrue(sent.stdout.contains(#""result":"ok""#), sent.stdout)
        let checkpoint = try car.agentTool(["checkpoint", "--state-dir", car.stateDir])
        XCTAssertEqual(checkpoint.status, 0, checkpoint.stderr)
        let head = try XCTUnwrap(try car.events().last?.seq)
        XCTAssertTrue(checkpoint.stdout.hasPrefix("checkpoint seq \(head) head "), checkpoint.stdout)
        XCTAssertTrue(verify.wait(timeoutSeconds: 20) { !verify.isRunning })
        XCTAssertEqual(verify.stop(), 0, verify.stdout + verify.stderr)
        XCTAssertTrue(verify.stdout.contains("intact: ") && verify.stdout.contains(", covered through seq \(head)"), verify.stdout)
        XCTAssertFalse(verify.stdout.contains("intact: 0 event(s)"), verify.stdout)

        // Without the TLS flags the tools name what is missing, and nothing is sent.
        let bare = try Subprocess.run("carkey", ["command", "send", "--mqtt", broker.url, "--key", owner.path,
                                                 "--vehicle", AgentHarness.vehicle, "--command", "lock"])
        XCTAssertEqual(bare.status, 2)
        XCTAssertTrue(bare.stderr.contains("'--mqtt' mqtts:// needs '--mqtt-ca FILE'"), bare.stderr)
        let half = try Subprocess.run("carkey", ["audit", "verify", "--mqtt", broker.url, "--mqtt-ca", pki.caFile, "--mqtt-cert", pki.clientCertificate,
                                                 "--vehicle", AgentHarness.vehicle, "--car-key", car.carKeyArgument])
        XCTAssertEqual(half.status, 2)
        XCTAssertTrue(half.stderr.contains("'--mqtt-cert' and '--mqtt-key' go together"), half.stderr)
    }

    /// No answer: the hint says what the broker holds on the car's retained presence topic.
    func testNoResultSaysWhatTheBrokerKnowsOfTheVehicle() throws {
        let broker = try MosquittoBroker()
        try broker.start()
        let car = AgentHarness()
        let agent = try car.start(clockSync: "yes", ["--mqtt", broker.url])
        let owner = try car.enrollOwner()
        XCTAssertTrue(agent.wait(timeoutSeconds: 20) { agent.stderr.contains("cloud: connected") }, agent.stderr)
        let base = ["command", "send", "--mqtt", broker.url, "--key", owner.path, "--command", "status", "--wait-result", "--timeout", "2"]

        let wrong = try Subprocess.run("carkey", base + ["--vehicle", "OCK-SIM-0002"])
        XCTAssertEqual(wrong.status, 1)
        XCTAssertEqual(wrong.stdout, "no result within 2 s\n")
        XCTAssertTrue(wrong.stderr.contains("carkey: hint: the broker holds no presence for vehicle OCK-SIM-0002 "
                                            + "(vehicles/OCK-SIM-0002/status is empty): check --vehicle"), wrong.stderr)

        XCTAssertEqual(car.stop(), 0)
        let stopped = try Subprocess.run("carkey", base + ["--vehicle", AgentHarness.vehicle])
        XCTAssertEqual(stopped.status, 1)
        XCTAssertTrue(stopped.stderr.contains("vehicles/\(AgentHarness.vehicle)/status says offline"), stopped.stderr)
    }

    func testAnEmptyStreamIsNothingVerifiedUnlessAllowed() throws {
        let folder = Subprocess.makeTemporaryDirectory()
        defer { Subprocess.removeTree(folder) }
        try Subprocess.write("", to: folder + "/empty.jsonl")
        let key = try Subprocess.run("carkey", ["keygen", "--out", folder + "/car.pem"]).stdout.filter { !$0.isWhitespace }
        let empty = try Subprocess.run("carkey", ["audit", "verify", "--car-key", key, "--events", folder + "/empty.jsonl"])
        XCTAssertEqual(empty.status, 1)
        XCTAssertEqual(empty.stdout, "nothing verified: 0 event(s), 0 of 0 checkpoint(s) valid\n")
        XCTAssertTrue(empty.stderr.contains("listen before the car publishes them"), empty.stderr)
        let allowed = try Subprocess.run("carkey", ["audit", "verify", "--car-key", key, "--events", folder + "/empty.jsonl", "--allow-empty", "--json"])
        XCTAssertEqual(allowed.status, 0, allowed.stderr)
        XCTAssertTrue(allowed.stdout.hasPrefix(#"{"intact":true,"empty":true,"#), allowed.stdout)
    }
}

// `carkey-agent checkpoint` (docs/cloud.md "Checkpoint now"): the running agent signs a
// checkpoint of its chain's head at once, keeps it in its store and queues it for
// vehicles/{id}/audit; asked again without new events, it signs the same head again.
import XCTest
import Drivers
import Protocol
import TestHarness

final class AuditCheckpointNowTests: XCTestCase {
    func testTheAgentSignsItsHeadOnRequestAndPublishesIt() throws {
        let broker = try MosquittoBroker()
        try broker.start()
        let audit = try CloudTestSubscriber(url: broker.url, filter: "vehicles/\(AgentHarness.vehicle)/audit")
        let car = AgentHarness()
        let agent = try car.start(clockSync: "yes", ["--mqtt", broker.url])
        _ = try car.enrollOwner()
        XCTAssertTrue(agent.wait(timeoutSeconds: 20) { agent.stderr.contains("cloud: connected") }, agent.stderr)

        let last = try XCTUnwrap(try car.events().last)
        let head = (seq: last.seq, hash: try XCTUnwrap(last.chain?.hash.hexString))
        let first = try car.agentTool(["checkpoint", "--state-dir", car.stateDir])
        XCTAssertEqual(first.status, 0, first.stderr)
        XCTAssertEqual(first.stdout, "checkpoint seq \(head.seq) head \(head.hash)\n")
        let again = try car.agentTool(["checkpoint", "--state-dir", car.stateDir, "--json"])
        XCTAssertEqual(again.status, 0, again.stderr)
        XCTAssertEqual(again.stdout, #"{"seq":\#(head.seq),"headHash":"\#(head.hash)"}"# + "\n")

        XCTAssertTrue(audit.wait(seconds: 10) { audit.received.count >= 2 }, "published: \(audit.received.count)")
        let checkpoints = audit.received.compactMap { AuditCheckpoint(json: $0.payload) }
        XCTAssertEqual(checkpoints.map(\.seq), [head.seq, head.seq])
        let carKey = try P256PublicKey(pemRepresentation: try Subprocess.read(car.stateDir + "/car-identity.pub"))
        XCTAssertTrue(checkpoints.allSatisfy { $0.isValid(carKey: carKey) }, "signed by the car's identity key")
        XCTAssertTrue(agent.stderr.contains("audit: checkpoint at seq \(head.seq) written on request"), agent.stderr)

        XCTAssertEqual(car.stop(), 0)
        let none = try car.agentTool(["checkpoint", "--state-dir", car.stateDir])
        XCTAssertEqual(none.status, 1, "no agent runs")
        XCTAssertTrue(none.stderr.contains("no agent is running for this state directory"), none.stderr)
    }
}

// The broker hands a retained message (desired configuration, revocation list) to the car again
// at every subscribe, after a restart too: a repeat of one already received is expected, so it
// is told apart from a rejected message and not counted as one. A repeat on a topic that is not
// retained stays a rejected duplicate.
import XCTest
@testable import Drivers
import Protocol

final class InboundGateRetainedTests: StorageTestCase {
    let topics = CloudTopics(vehicleID: "V")
    let uuid = "6f1c2d3e-4a5b-4c6d-8e7f-0011223344aa"

    func testARetainedConfigHandledBeforeARestartIsARepeatNotARejection() throws {
        let desired = MQTTInbound(topic: topics.configDesired, payload: Bytes(#"{"id":"\#(uuid)","type":"config","body":"0a"}"#.utf8))
        let first = InboundGate(topics: topics, store: try openStore())
        XCTAssertEqual(first.admit(desired), .success(InboundEnvelope(topic: topics.configDesired, id: uuid, type: "config", body: [0x0a])))
        XCTAssertEqual(first.admit(desired), .failure(.retainedRepeat), "a resubscribe in the same run")
        XCTAssertTrue(try openStore().write { try $0.markInboundSeen(uuid) })

        let restarted = InboundGate(topics: topics, store: try openStore())
        XCTAssertEqual(restarted.admit(desired), .failure(.retainedRepeat))
        XCTAssertEqual(restarted.counters.retainedRepeats, 1)
        XCTAssertTrue(restarted.counters.rejected.isEmpty, "not a rejected message: \(restarted.counters.rejected)")

        let list = MQTTInbound(topic: topics.revocationList, payload: Bytes(#"{"id":"\#(uuid)","type":"revocationList","body":"0b"}"#.utf8))
        XCTAssertEqual(restarted.admit(list), .failure(.retainedRepeat), "the revocation list is retained too")

        let command = MQTTInbound(topic: topics.remoteCommands, payload: Bytes(#"{"id":"\#(uuid)","type":"command","body":"0c"}"#.utf8))
        XCTAssertEqual(restarted.admit(command), .failure(.duplicate), "a command is not retained: its repeat is a duplicate")
        XCTAssertEqual(restarted.counters.rejected[.duplicate], 1)
    }
}

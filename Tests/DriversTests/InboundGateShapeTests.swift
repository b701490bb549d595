// docs/cloud.md: the envelope is exactly {"id","type","body"}. A member the car does not know
// and a repeated member are refused at the gate (counted, nothing admitted), and the log line
// can name the unknown member.
import XCTest
@testable import Drivers
import Protocol

final class InboundGateShapeTests: StorageTestCase {
    let topics = CloudTopics(vehicleID: "V")
    let uuid = "6f1c2d3e-4a5b-4c6d-8e7f-001122334455"

    private func message(_ json: String) -> MQTTInbound {
        MQTTInbound(topic: topics.commands, payload: Bytes(json.utf8))
    }

    func testAnUnknownMemberIsRefusedAndNamed() throws {
        let gate = InboundGate(topics: topics, store: try openStore())
        let extra = message(#"{"id":"\#(uuid)","type":"revocation","body":"0a0b","priority":"high"}"#)
        XCTAssertEqual(gate.admit(extra), .failure(.unknownField))
        XCTAssertEqual(gate.lastDetail, #"unknown field "priority""#)
        XCTAssertEqual(gate.counters.rejected[.unknownField], 1)
        XCTAssertEqual(gate.counters.accepted, 0)
        // The refusal consumed nothing: the exact shape with the same ID is still admitted.
        XCTAssertEqual(gate.admit(message(#"{"id":"\#(uuid)","type":"revocation","body":"0a0b"}"#)),
                       .success(InboundEnvelope(topic: topics.commands, id: uuid, type: "revocation", body: [0x0a, 0x0b])))
        XCTAssertNil(gate.lastDetail)
    }

    func testADuplicateMemberIsRefused() throws {
        let gate = InboundGate(topics: topics, store: try openStore())
        // Two "body" members: one reader could take the first, another the last.
        let twice = message(#"{"id":"\#(uuid)","type":"revocation","body":"0a0b","body":"ffff"}"#)
        guard case .failure(let reason) = gate.admit(twice) else { return XCTFail("a duplicate member was admitted") }
        XCTAssertEqual(reason, .malformed, "the parser refuses duplicate keys")
        XCTAssertEqual(gate.counters.accepted, 0)
    }
}

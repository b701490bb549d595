// The MQTT envelope as the JSON parser reads it for the inbound gate: what JSONDecoder accepted
// still passes (escaped characters, extra members, whitespace, a BOM), and what the strict
// parser refuses is now malformed instead of silently picked (a duplicate "id" or "type": the
// decoder kept the first, a relay could have appended a second).
import XCTest
@testable import Drivers
import Protocol

final class JSONEnvelopeTests: StorageTestCase {
    let topics = CloudTopics(vehicleID: "V")
    let uuid = "6f1c2d3e-4a5b-4c6d-8e7f-001122334455"

    private func admit(_ payload: [UInt8]) throws -> Result<InboundEnvelope, InboundRejection> {
        InboundGate(topics: topics, store: try openStore()).admit(MQTTInbound(topic: topics.commands, payload: payload))
    }

    private func admit(_ json: String) throws -> Result<InboundEnvelope, InboundRejection> {
        try admit(Array(json.utf8))
    }

    func testShapesTheDecoderAcceptedStillPass() throws {
        let expected = InboundEnvelope(topic: topics.commands, id: uuid, type: "command", body: [0xAB])
        XCTAssertEqual(try admit(#"{"id":"\#(uuid)","type":"command","body":"ab"}"#), .success(expected))
        XCTAssertEqual(try admit("\n{ \"body\" : \"ab\" ,\t\"type\": \"command\", \"id\": \"\(uuid)\" }\r\n"), .success(expected))
        XCTAssertEqual(try admit(#"{"id":"\#(uuid)","type":"comm\u0061nd","body":"\u0061b"}"#), .success(expected), "escapes decode")
        // docs/cloud.md: exactly this shape; another member is refused (issue 14), not ignored.
        XCTAssertEqual(try admit(#"{"id":"\#(uuid)","type":"command","body":"ab","extra":[1,{"x":null}]}"#), .failure(.unknownField))
        XCTAssertEqual(try admit([0xEF, 0xBB, 0xBF] + Array(#"{"id":"\#(uuid)","type":"command","body":"ab"}"#.utf8)),
                       .success(expected))
    }

    func testWhatTheStrictParserRefusesIsMalformed() throws {
        let refused = [
            #"{"id":"\#(uuid)","type":"command","body":"ab","type":"revocation"}"#,  // duplicate member
            #"{"id":"\#(uuid)","type":"command","body":"ab",}"#,                       // trailing comma
            #"{"id":"\#(uuid)","type":"command","body":"ab"} x"#,                      // trailing data
            #"{"id":"\#(uuid)","type":"command","body":"\uD800"}"#,                    // lone surrogate
            #"{"id":"\#(uuid)","type":"command","body":7}"#,                           // body not a string
            #"{"id":"\#(uuid)","type":null,"body":"ab"}"#,                             // type not a string
            #"["\#(uuid)","command","ab"]"#,                                           // not an object
            String(repeating: "[", count: 5000),                                       // deep, within 8 KiB
        ]
        for payload in refused {
            XCTAssertEqual(try admit(payload), .failure(.malformed), payload)
        }
    }
}

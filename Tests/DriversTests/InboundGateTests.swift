// Inbound messages: unknown topics, oversized and malformed payloads and duplicates are
// rejected, counted, and change nothing; a good one is admitted once, across restarts too.
import XCTest
@testable import Drivers
import Protocol

final class InboundGateTests: StorageTestCase {
    let topics = CloudTopics(vehicleID: "V")
    let uuid = "6f1c2d3e-4a5b-4c6d-8e7f-001122334455"

    private func message(_ topic: String, _ json: String) -> MQTTInbound {
        MQTTInbound(topic: topic, payload: Bytes(json.utf8))
    }

    func testAdmitsAWellFormedMessageOnceEvenAfterRestart() throws {
        let good = message(topics.commands, #"{"id":"\#(uuid)","type":"revocation","body":"0a0b"}"#)
        do {
            let gate = InboundGate(topics: topics, store: try openStore())
            XCTAssertEqual(gate.admit(good), .success(InboundEnvelope(topic: topics.commands, id: uuid, type: "revocation", body: [0x0a, 0x0b])))
            XCTAssertEqual(gate.admit(good), .failure(.duplicate))
        }
        // The agent's thread answered it: the ID is recorded with the answer.
        XCTAssertTrue(try openStore().write { try $0.markInboundSeen(uuid) })
        let gate = InboundGate(topics: topics, store: try openStore())
        XCTAssertEqual(gate.admit(good), .failure(.duplicate), "de-duplication is persisted")
        XCTAssertEqual(gate.counters.rejected[.duplicate], 1)
    }

    /// The gate runs on the cloud thread; the message takes effect later on the agent's thread.
    /// Recording the ID as seen at admission (before the effect) meant a stop or crash in
    /// between lost the message for good: the broker had its PUBACK, and the cloud's retry with
    /// the same ID was dropped as a duplicate (a revocation never applied, never answered).
    func testAMessageAdmittedButNeverHandledIsAdmittedAgainAfterARestart() throws {
        let good = message(topics.commands, #"{"id":"\#(uuid)","type":"revocation","body":"0a0b"}"#)
        let envelope = InboundEnvelope(topic: topics.commands, id: uuid, type: "revocation", body: [0x0a, 0x0b])
        do {
            let gate = InboundGate(topics: topics, store: try openStore())
            XCTAssertEqual(gate.admit(good), .success(envelope))
            // ... the agent stops (or is killed) before its thread handles the message.
        }
        let store = try openStore()
        let gate = InboundGate(topics: topics, store: store)
        XCTAssertEqual(gate.admit(good), .success(envelope), "the redelivery reaches the handler: nothing happened yet")
        XCTAssertEqual(gate.admit(good), .failure(.duplicate), "within one run a repeat is still dropped")
        XCTAssertTrue(try store.write { try $0.markInboundSeen(uuid) }, "handled: recorded with its answer")
        XCTAssertEqual(InboundGate(topics: topics, store: try openStore()).admit(good), .failure(.duplicate))
    }

    func testRejectionsAreTypedCountedAndChangeNothing() throws {
        let store = try openStore()
        let gate = InboundGate(topics: topics, store: store)
        let cases: [(MQTTInbound, InboundRejection)] = [
            (message("vehicles/V/other", #"{"id":"\#(uuid)","type":"command","body":""}"#), .unknownTopic),
            (message("vehicles/W/commands", #"{"id":"\#(uuid)","type":"command","body":""}"#), .unknownTopic),
            (message(topics.commands, String(repeating: " ", count: 9000)), .oversized),
            (message(topics.commands, "not json"), .malformed),
            (message(topics.commands, #"{"id":"123","type":"command","body":""}"#), .malformed),
            (message(topics.commands, #"{"id":"\#(uuid)","type":"config","body":""}"#), .malformed),
            (message(topics.commands, #"{"id":"\#(uuid)","type":"command","body":"xyz"}"#), .malformed),
            (message(topics.commands, #"{"id":"\#(uuid)","type":"command"}"#), .malformed),
            (MQTTInbound(topic: topics.commands, payload: [0xff, 0x00, 0xfe]), .malformed),
        ]
        for (input, expected) in cases {
            XCTAssertEqual(gate.admit(input), .failure(expected), "\(String(decoding: input.payload.prefix(60), as: UTF8.self))")
        }
        XCTAssertEqual(gate.counters.accepted, 0)
        XCTAssertEqual(gate.counters.rejected[.malformed], 6)
        XCTAssertEqual(gate.counters.rejected[.unknownTopic], 2)
        XCTAssertEqual(gate.counters.rejected[.oversized], 1)
        // None of them consumed the UUID: the real message is still admitted.
        XCTAssertEqual(gate.admit(message(topics.commands, #"{"id":"\#(uuid)","type":"command","body":""}"#)),
                       .success(InboundEnvelope(topic: topics.commands, id: uuid, type: "command", body: [])))
        XCTAssertEqual(try store.lastEventSequence(), 0, "rejections write no events")
    }

    func testFuzzedPayloadsNeverCrashOrAdmitGarbage() throws {
        let gate = InboundGate(topics: topics, store: try openStore())
        var generator = SeededGenerator(seed: 0x5eed)
        for _ in 0..<2000 {
            let length = Int.random(in: 0...200, using: &generator)
            let payload = (0..<length).map { _ in UInt8.random(in: 0...255, using: &generator) }
            if case .success = gate.admit(MQTTInbound(topic: topics.commands, payload: payload)) { XCTFail("random bytes admitted") }
        }
    }
}

/// SplitMix64: a deterministic generator for fuzz tests.
struct SeededGenerator: RandomNumberGenerator {
    var state: UInt64
    init(seed: UInt64) { state = seed }
    mutating func next() -> UInt64 {
        state &+= 0x9E37_79B9_7F4A_7C15
        var z = state
        z = (z ^ (z >> 30)) &* 0xBF58_476D_1CE4_E5B9
        z = (z ^ (z >> 27)) &* 0x94D0_49BB_1331_11EB
        return z ^ (z >> 31)
    }
}

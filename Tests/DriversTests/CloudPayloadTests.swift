// Byte-level vectors for what the car publishes, and the state report's coalescing.
import XCTest
@testable import Drivers
import Protocol

final class CloudPayloadTests: StorageTestCase {
    func testEventPayloadVector() {
        let stored = StoredEvent(seq: 7, uuid: "0f2c9a1e-5b7d-4c3a-9e8f-1a2b3c4d5e6f", event: NewEvent(
            kind: .accessDecision, time: EventTime(seconds: 1_760_000_000, trusted: true), actor: "a1b2c3d4e5f60708",
            action: EventAction(unlisted: "unlock"), result: "refused", fault: EventFault(code: 5, name: "insufficientPermission"),
            detailJSON: #"{"link":3}"#))
        XCTAssertEqual(String(decoding: EventPayload.encode(stored), as: UTF8.self),
                       #"{"id":"0f2c9a1e-5b7d-4c3a-9e8f-1a2b3c4d5e6f","seq":7,"time":1760000000,"timeTrusted":true,"kind":"access-decision","#
                       + #""actor":"a1b2c3d4e5f60708","action":"unlock","result":"refused","fault":{"code":5,"name":"insufficientPermission"},"#
                       + #""detail":{"link":3}}"#)
    }

    func testStateReportUsesVSSNamesAndOurBranch() {
        let report = StateReport(vehicle: [.locked, .trunkLocked], keyProximityZone: "near", nearestKeyDistanceCentimetres: 140,
                                 cloudConnected: true, clockTrusted: false, outboxDepth: 2, health: "ok", softwareVersion: "0.1.0")
        XCTAssertEqual(String(decoding: report.encode(uuid: "u", sequence: 3, timeSeconds: 10, timeTrusted: false), as: UTF8.self),
                       #"{"id":"u","seq":3,"time":10,"timeTrusted":false,"signals":{"#
                       + #""Vehicle.Cabin.Door.Row1.DriverSide.IsLocked":true,"Vehicle.Cabin.Door.Row1.DriverSide.IsOpen":false,"#
                       + #""Vehicle.Body.Trunk.Rear.IsOpen":false,"Vehicle.Body.Trunk.Rear.IsLocked":true,"#
                       + #""OpenCarKey.Cabin.AnyDoorOpen":false,"OpenCarKey.Key.Proximity.Zone":"near","#
                       + #""OpenCarKey.Key.Proximity.Distance":140,"OpenCarKey.CloudLink.IsConnected":true,"#
                       + #""OpenCarKey.Clock.IsTrusted":false,"OpenCarKey.Outbox.Depth":2,"OpenCarKey.Agent.Health":"ok","#
                       + #""OpenCarKey.Agent.Version":"0.1.0"}}"#)
    }

    func testJSONStringsAreEscaped() {
        XCTAssertEqual(JSONValue.string("a\"b\\c\n\u{01}").serialized, #""a\"b\\c\n\u0001""#)
    }

    func testStateReportsCoalesceAndCarryIncreasingSequence() throws {
        let store = try openStore()
        let topics = CloudTopics(vehicleID: "VIN9")
        let time = EventTime(seconds: 100, trusted: true)
        for zone in ["far", "near", "inside"] {
            try store.write { transaction in
                try transaction.enqueueStateReport(StateReport(vehicle: [], keyProximityZone: zone, cloudConnected: false,
                                                               clockTrusted: true, outboxDepth: 0), topics: topics, time: time)
            }
        }
        let pending = try SQLiteOutbox(store: store).pending(afterID: 0, limit: 10)
        XCTAssertEqual(pending.count, 1, "only the newest state report waits")
        XCTAssertEqual(pending[0].topic, "vehicles/VIN9/state")
        XCTAssertTrue(pending[0].retain)
        let text = String(decoding: pending[0].payload, as: UTF8.self)
        XCTAssertTrue(text.contains(#""seq":3"#), text)
        XCTAssertTrue(text.contains(#""id":"\#(pending[0].uuid)""#), "the payload carries the message UUID")
        XCTAssertTrue(text.contains(#""OpenCarKey.Key.Proximity.Zone":"inside""#))
        XCTAssertEqual(pending[0].sequence, 3, "the row's sequence (the user property seq) is the payload's seq")
    }

    func testConfigReportRowCarriesThePayloadSequence() throws {
        let store = try openStore()
        let topics = CloudTopics(vehicleID: "VIN9")
        for result in ["applied", "refused"] {
            try store.write { transaction in
                try transaction.enqueueConfigReport([("result", .string(result))], topics: topics, time: EventTime(seconds: 100, trusted: true))
            }
        }
        let pending = try SQLiteOutbox(store: store).pending(afterID: 0, limit: 10)
        XCTAssertEqual(pending.count, 1, "only the newest report waits")
        XCTAssertTrue(String(decoding: pending[0].payload, as: UTF8.self).contains(#""seq":2,"#))
        XCTAssertEqual(pending[0].sequence, 2, "the row's sequence (the user property seq) is the payload's seq")
    }

    func testRouterSendsAccessDecisionsAtTheNeverDroppedPriority() throws {
        let router = EventPayload.router(CloudTopics(vehicleID: "V"))
        let access = router.route(StoredEvent(seq: 1, uuid: "u1", event: accessEvent("unlock")))
        XCTAssertEqual(access?.priority, .accessEvent)
        XCTAssertEqual(access?.topic, "vehicles/V/events")
        XCTAssertEqual(access?.qos, 1)
        XCTAssertEqual(access?.uuid, "u1")
        let other = router.route(StoredEvent(seq: 2, uuid: "u2", event: NewEvent(kind: .storage, time: EventTime(seconds: 0, trusted: false),
                                                                           action: EventAction(unlisted: "repair"), result: "ok")))
        XCTAssertEqual(other?.priority, .event)
    }
}

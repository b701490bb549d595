// `carkey-agent keys` and `carkey-agent events` (text and --json), and what happens when a test
// edits a sealed row behind the agent's back: the key is not used, and a tamper event says so.
import XCTest
import FoundationEssentials
import Drivers
import Protocol

final class AgentKeysToolsTests: XCTestCase {
    private var car: AgentHarness!

    override func setUp() { car = AgentHarness() }
    override func tearDown() { car = nil }

    private struct KeysJSON: Decodable {
        struct Key: Decodable {
            let keyID: String, role: String, permissions: [String], level: String?
            let notBefore: String?, notAfter: String?, revoked: Bool
            let enrolledAt: String?, lastUsedAt: String?, useCount: Int
        }
        struct NotUsed: Decodable { let kind: String, id: String, reason: String }
        let keys: [Key]
        let notUsed: [NotUsed]
    }

    private struct EventsJSON: Decodable {
        struct Fault: Decodable { let code: Int?, name: String }
        struct Event: Decodable {
            let seq: Int64, uuid: String, time: String, trusted: Bool, kind: String, actor: String?
            let action: String, result: String, fault: Fault?
        }
        let events: [Event]
    }

    private func tool(_ arguments: [String]) throws -> ProcessResult {
        let result = try car.agentTool(arguments + ["--state-dir", car.stateDir])
        XCTAssertEqual(result.status, 0, "\(arguments): \(result.stderr)")
        return result
    }

    func testKeysAndEventsInTextAndJSONWhileTheAgentRuns() throws {
        try car.start()
        let owner = try car.enrollOwner()
        let ownerID = try car.keyIDHex(owner.publicHex)
        XCTAssertEqual(try car.phone("unlock", key: owner.path).firstLine, "ok")
        try car.waitForEvent { $0.event.action == "session" && $0.event.result == "closed" }

        // Text: one row per key, never the public key itself.
        let text = try tool(["keys"])
        let lines = text.stdout.split(separator: "\n").map(String.init)
        XCTAssertTrue(lines.first?.hasPrefix("KEY ID            ROLE   PERMISSIONS  VALID FROM  VALID UNTIL  LAST USE") == true, text.stdout)
        XCTAssertTrue(lines[1].hasPrefix("\(ownerID)  owner  all          -           -            "), lines[1])
        XCTAssertTrue(lines[1].hasSuffix("active"), lines[1])
        XCTAssertFalse(text.stdout.contains(owner.publicHex))

        let json = try JSONDecoder().decode(KeysJSON.self, from: Data(try tool(["keys", "--json"]).stdout.utf8))
        XCTAssertEqual(json.keys.count, 1)
        let key = try XCTUnwrap(json.keys.first)
        XCTAssertEqual([key.keyID, key.role], [ownerID, "owner"])
        XCTAssertEqual(key.permissions, ["unlock", "lock", "trunk", "remote", "manage"])
        XCTAssertNil(key.level)
        XCTAssertNil(key.notBefore)
        XCTAssertNil(key.notAfter)
        XCTAssertFalse(key.revoked)
        XCTAssertNotNil(key.enrolledAt)
        XCTAssertTrue(json.notUsed.isEmpty)

        // Events: the pairing, the enrollment, the session.
        let events = try JSONDecoder().decode(EventsJSON.self, from: Data(try tool(["events", "--json"]).stdout.utf8)).events
        XCTAssertEqual(events.map(\.seq), Array(1...Int64(events.count)))
        XCTAssertEqual(events.map { "\($0.kind) \($0.action) \($0.result)" }, [
            "enrollment pairing opened", "enrollment pairing closed", "enrollment enroll owner enrolled",
            "access-decision session established", "access-decision unlock accepted", "access-decision unlock ok",
            "access-decision session closed",
        ])
        XCTAssertTrue(events.allSatisfy { !$0.trusted && $0.time.hasSuffix("Z") })
        XCTAssertEqual(events.dropFirst().map(\.actor), Array(repeating: ownerID, count: events.count - 1))

        let since = try tool(["events", "--since", "4", "--limit", "1"])
        let rows = since.stdout.split(separator: "\n").map(String.init)
        XCTAssertEqual(rows.count, 2, since.stdout)
        XCTAssertTrue(rows[0].hasPrefix("SEQ  TIME"), rows[0])
        XCTAssertTrue(rows[1].hasPrefix("5    "), rows[1])
        XCTAssertTrue(rows[1].contains("untrusted  access-decision  \(ownerID)  unlock  accepted"), rows[1])
        XCTAssertTrue(since.stderr.contains("continue with --since 5"), since.stderr)

        // The agent writes last use in batches; at the latest when it stops.
        XCTAssertEqual(car.stop(), 0)
        let after = try JSONDecoder().decode(KeysJSON.self, from: Data(try tool(["keys", "--json"]).stdout.utf8))
        XCTAssertEqual(after.keys.first?.useCount, 1)
        XCTAssertNotNil(after.keys.first?.lastUsedAt)
    }

    func testToolsRefuseAMissingStoreAndBadArguments() throws {
        for command in ["keys", "events"] {
            let result = try car.agentTool([command, "--state-dir", car.folder + "/nothing"])
            XCTAssertEqual(result.status, 1)
            XCTAssertTrue(result.stderr.contains("no car store in \(car.folder)/nothing"), result.stderr)
            XCTAssertThrowsError(try Files.mode(of: car.folder + "/nothing"), "a tool never creates a state directory")
        }
        XCTAssertEqual(try car.agentTool(["events", "--state-dir", car.stateDir, "--limit", "0"]).status, 2)
        XCTAssertEqual(try car.agentTool(["events", "--state-dir", car.stateDir, "--since", "x"]).status, 2)
    }

    func testAnEditedKeyRowIsNotUsedAndReportedAsTampering() throws {
        try car.start()
        let owner = try car.enrollOwner()
        let ownerID = try car.keyIDHex(owner.publicHex)
        XCTAssertEqual(car.stop(), 0)

        // Flip one bit of the owner's sealed key record, as someone with the file would.
        let database = try Database(path: car.stateDir + "/carkey.db", create: false)
        try database.transaction { connection in
            let rows = try connection.rows("SELECT sealed FROM sealed_records WHERE kind = 'key' AND id = ?1", [.blob(Bytes(hex: ownerID)!)])
            guard case .blob(var sealed)? = rows.first?.first else { return XCTFail("no key row") }
            sealed[sealed.count / 2] ^= 0x01
            try connection.run("UPDATE sealed_records SET sealed = ?1 WHERE kind = 'key' AND id = ?2",
                               [.blob(sealed), .blob(Bytes(hex: ownerID)!)])
        }

        let agent = try car.start()
        XCTAssertTrue(agent.stderr.contains("carkey-agent: keychain record NOT USED: key \(ownerID) tampered"), agent.stderr)
        XCTAssertTrue(agent.stderr.contains("no owner key"), agent.stderr)
        let refused = try car.phone("unlock", key: owner.path)
        XCTAssertEqual(refused.firstLine, "fault: unknownKey (1)", "a tampered key is never used")

        let keys = try tool(["keys"])
        XCTAssertTrue(keys.stdout.contains("NOT USED: key record \(ownerID) failed authentication (tampered"), keys.stdout)
        let json = try JSONDecoder().decode(KeysJSON.self, from: Data(try tool(["keys", "--json"]).stdout.utf8))
        XCTAssertTrue(json.keys.isEmpty)
        XCTAssertEqual(json.notUsed.map { [$0.kind, $0.id, $0.reason] }, [["key", ownerID, "tampered"]])

        let tamper = try car.events().filter { $0.event.kind == .tamper }
        XCTAssertFalse(tamper.isEmpty)
        XCTAssertTrue(tamper.allSatisfy { $0.event.result == "tamper detected" && $0.event.fault?.name == "recordTampered" })
        XCTAssertEqual(tamper.first?.event.detailJSON, #"{"recordKind":"key","recordID":"\#(ownerID)"}"#)

        // The way back is physical presence: pair the phone again, which rewrites the row.
        XCTAssertEqual(try car.enroll(owner.path, code: try car.pair()).firstLine, "enrolled")
        XCTAssertEqual(try car.phone("unlock", key: owner.path).firstLine, "ok")
        XCTAssertEqual(car.stop(), 0)
        XCTAssertFalse(try car.start().stderr.contains("NOT USED"))
    }
}

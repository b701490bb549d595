// `carkey audit verify` through the real binary: exit 0 intact, 1 with findings named by
// sequence number, 2 on usage errors. The stream is made by a real store.
import XCTest
import Drivers
import Protocol

final class AuditVerifyCommandTests: XCTestCase {
    var folder = ""

    override func setUp() { folder = Subprocess.makeTemporaryDirectory() }
    override func tearDown() { Subprocess.removeTree(folder) }

    /// Writes events 1-6 and a checkpoint at 6; returns the car key's hex and the lines.
    func stream() throws -> (key: String, lines: [String]) {
        let store = try CarStore.open(stateDirectory: folder + "/state", clock: { EventTime(seconds: 100, trusted: true) })
        let key = try store.loadOrCreateIdentityKey()
        var lines = [String]()
        for index in 1...6 {
            let event = try store.appendEvent(NewEvent(kind: .accessDecision, time: EventTime(seconds: 100 + Int64(index), trusted: true),
                                                       actor: "0a0b", action: EventAction(unlisted: "unlock"), result: "allowed"))
            lines.append(String(decoding: EventPayload.encode(event), as: UTF8.self))
        }
        let checkpoint = try XCTUnwrap(store.writeAuditCheckpoint(key: key, vehicleID: "VIN3", topic: CloudTopics(vehicleID: "VIN3").audit,
                                                                  time: EventTime(seconds: 200, trusted: true)))
        lines.append(checkpoint.json)
        return (key.publicKey.sec1.hexString, lines)
    }

    func run(_ lines: [String], key: String, extra: [String] = []) throws -> ProcessResult {
        let path = folder + "/events.jsonl"
        try Subprocess.write(lines.joined(separator: "\n") + "\n", to: path)
        return try Subprocess.run("carkey", ["audit", "verify", "--car-key", key, "--events", path, "--vehicle", "VIN3"] + extra)
    }

    func testIntactStreamExitsZero() throws {
        let (key, lines) = try stream()
        let result = try run(lines, key: key)
        XCTAssertEqual(result.status, 0, result.stdout + result.stderr)
        XCTAssertTrue(result.stdout.contains("intact: 6 event(s), 1 of 1 checkpoint(s) valid, covered through seq 6"), result.stdout)
    }

    func testDeletedReorderedAndAlteredEventsAreNamed() throws {
        let (key, lines) = try stream()
        var deleted = lines
        deleted.remove(at: 2)
        let one = try run(deleted, key: key)
        XCTAssertEqual(one.status, 1)
        XCTAssertTrue(one.stdout.hasPrefix("deleted seq 3: "), one.stdout)

        var reordered = lines
        reordered[3] = reordered[3].replacingOccurrences(of: #""seq":4,"#, with: #""seq":5,"#)
        reordered[4] = reordered[4].replacingOccurrences(of: #""seq":5,"#, with: #""seq":4,"#)
        let two = try run(reordered, key: key)
        XCTAssertEqual(two.status, 1)
        XCTAssertTrue(two.stdout.hasPrefix("reordered seq 4 and 5: "), two.stdout)

        var altered = lines
        altered[1] = altered[1].replacingOccurrences(of: #""result":"allowed""#, with: #""result":"refused""#)
        let three = try run(altered, key: key, extra: ["--json"])
        XCTAssertEqual(three.status, 1)
        XCTAssertTrue(three.stdout.hasPrefix(#"{"intact":false,"empty":false,"findings":[{"kind":"altered","seq":2,"#), three.stdout)
    }

    /// docs/cloud.md's example: events 1-7, the checkpoint at 6, event 3 left out.
    func testTheDocumentedExampleOutput() throws {
        let doc = try String(contentsOfFile: #filePath.components(separatedBy: "/Tests/")[0] + "/docs/cloud.md", encoding: .utf8)
        let start = try XCTUnwrap(doc.range(of: "**Example** (`AuditVerifyCommandTests.testTheDocumentedExampleOutput`"))
        var blocks: [String] = []
        var current: [Substring]?
        for line in doc[start.upperBound...].split(separator: "\n", omittingEmptySubsequences: false) where blocks.count < 2 {
            if line.hasPrefix("```") {
                if let lines = current { blocks.append(lines.joined(separator: "\n")); current = nil } else { current = [] }
            } else if current != nil {
                current?.append(line)
            }
        }
        XCTAssertEqual(blocks.count, 2, "text and JSON output")
        guard blocks.count == 2 else { return }

        var (key, lines) = try stream()
        let store = try CarStore.open(stateDirectory: folder + "/state", clock: { EventTime(seconds: 100, trusted: true) })
        let seventh = try store.appendEvent(NewEvent(kind: .accessDecision, time: EventTime(seconds: 107, trusted: true),
                                                     actor: "0a0b", action: EventAction(unlisted: "unlock"), result: "allowed"))
        lines.append(String(decoding: EventPayload.encode(seventh), as: UTF8.self))
        lines.remove(at: 2)
        let text = try run(lines, key: key)
        XCTAssertEqual(text.status, 1)
        XCTAssertEqual(text.stdout.trimmingCharacters(in: .newlines), blocks[0])
        let json = try run(lines, key: key, extra: ["--json"])
        XCTAssertEqual(json.status, 1)
        XCTAssertEqual(json.stdout.trimmingCharacters(in: .newlines), blocks[1])
    }

    func testUsageErrorsExitTwo() throws {
        let (key, lines) = try stream()
        XCTAssertEqual(try Subprocess.run("carkey", ["audit", "verify", "--events", "/nonexistent"]).status, 2, "no key")
        XCTAssertEqual(try Subprocess.run("carkey", ["audit", "verify", "--car-key", key]).status, 2, "no input")
        XCTAssertEqual(try Subprocess.run("carkey", ["audit", "verify", "--car-key", key, "--url", "mqtt://127.0.0.1:1"]).status, 2,
                       "--url without --vehicle")
        XCTAssertEqual(try run(lines, key: "00ff").status, 2, "short key")
    }
}

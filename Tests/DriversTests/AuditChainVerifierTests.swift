// The verifier against real store output: intact, deleted, reordered, altered, forged
// checkpoint, pruned-before-publishing and not-yet-covered.
import XCTest
@testable import Drivers
import Protocol

final class AuditChainVerifierTests: StorageTestCase {
    let key = try! P256PrivateKey.generate()
    let topics = CloudTopics(vehicleID: "VIN7")

    /// Ten events and a checkpoint at 8: the published lines (events, then the checkpoint).
    func publishedStream() throws -> (events: [String], checkpoint: String) {
        let store = try openStore()
        var lines = [String]()
        var checkpoint = ""
        for index in 1...10 {
            let event = try store.appendEvent(accessEvent(index % 2 == 0 ? "lock" : "unlock"))
            lines.append(String(decoding: EventPayload.encode(event), as: UTF8.self))
            if index == 8 {
                checkpoint = try XCTUnwrap(store.writeAuditCheckpoint(key: key, vehicleID: topics.vehicleID, topic: topics.audit, time: EventTime(seconds: 1, trusted: true))).json
            }
        }
        return (lines, checkpoint)
    }

    func verify(_ lines: [String], vehicle: String? = "VIN7") -> AuditReport {
        var verifier = AuditVerifier(carKey: key.publicKey, vehicle: vehicle)
        for line in lines { verifier.add(Bytes(line.utf8)) }
        return verifier.verify()
    }

    func testAnIntactStreamPassesAndReportsWhatIsNotYetCovered() throws {
        let (events, checkpoint) = try publishedStream()
        let report = verify(events.shuffled() + [checkpoint] + [events[3]])
        XCTAssertEqual(report.findings, [], "arrival order and redelivery are not findings")
        XCTAssertEqual(report.coveredThrough, 8)
        XCTAssertEqual(report.notYetCovered, 9...10)
    }

    func testADeletedEventIsFoundBySequence() throws {
        let (events, checkpoint) = try publishedStream()
        var lines = events
        lines.remove(at: 4)
        XCTAssertEqual(verify(lines + [checkpoint]).findings.map(\.kind), [.deleted])
        XCTAssertEqual(verify(lines + [checkpoint]).findings.first?.seq, 5)
        // The tail cut before the checkpoint: only the checkpoint can tell.
        let tail = verify(Array(events.prefix(6)) + [checkpoint])
        XCTAssertEqual(tail.findings.map(\.kind), [.deleted])
        XCTAssertEqual(tail.findings.first.map { [$0.seq, $0.otherSeq] }, [7, 8])
    }

    func testAReorderedPairIsFound() throws {
        let (events, checkpoint) = try publishedStream()
        var lines = events
        lines[2] = lines[2].replacingOccurrences(of: #""seq":3,"#, with: #""seq":4,"#)
        lines[3] = lines[3].replacingOccurrences(of: #""seq":4,"#, with: #""seq":3,"#)
        let report = verify(lines + [checkpoint])
        XCTAssertEqual(report.findings.map(\.kind), [.reordered], report.findings.map(\.line).joined(separator: "\n"))
        XCTAssertEqual(report.findings.first.map { [$0.seq, $0.otherSeq] }, [3, 4])
    }

    func testAnAlteredEventIsFound() throws {
        let (events, checkpoint) = try publishedStream()
        var lines = events
        lines[5] = lines[5].replacingOccurrences(of: #""result":"allowed""#, with: #""result":"refused""#)
        XCTAssertNotEqual(lines[5], events[5])
        let report = verify(lines + [checkpoint])
        XCTAssertEqual(report.findings.map(\.kind), [.altered])
        XCTAssertEqual(report.findings.first?.seq, 6)
    }

    func testAnAlteredAndRehashedEventBreaksTheNextLink() throws {
        let (events, checkpoint) = try publishedStream()
        var line = try XCTUnwrap(AuditEventLine(json: Bytes(events[1].utf8)))
        var fields = line.fields
        fields.result = "refused"
        let rehashed = EventCanonical.hash(fields, prevHash: line.chain!.prevHash)
        var lines = events
        lines[1] = lines[1].replacingOccurrences(of: #""result":"allowed""#, with: #""result":"refused""#)
            .replacingOccurrences(of: line.chain!.hash.hexString, with: rehashed.hexString)
        line = try XCTUnwrap(AuditEventLine(json: Bytes(lines[1].utf8)))
        XCTAssertEqual(line.recomputedHash, line.chain?.hash, "self-consistent")
        let report = verify(lines + [checkpoint])
        XCTAssertEqual(report.findings.map(\.kind), [.altered])
        XCTAssertEqual(report.findings.first?.seq, 3)
    }

    func testAForgedCheckpointIsFound() throws {
        let (events, checkpoint) = try publishedStream()
        let forged = checkpoint.replacingOccurrences(of: #""seq":8,"#, with: #""seq":10,"#)
        let report = verify(events + [forged])
        XCTAssertEqual(report.findings.map(\.kind), [.forgedCheckpoint])
        XCTAssertEqual(report.findings.first?.seq, 10)
        XCTAssertEqual(verify(events + [checkpoint], vehicle: "OTHER").findings.map(\.kind), [.forgedCheckpoint])
    }

    func testPrunedEventsRaiseNoFalseAlarm() throws {
        let store = try openStore()
        var lines = [String]()
        for index in 1...12 {
            let event = try store.appendEvent(accessEvent("lock"))
            // 1-4 published; 5-7 stay unpublished and are pruned below.
            if !(5...7).contains(index) { lines.append(String(decoding: EventPayload.encode(event), as: UTF8.self)) }
        }
        try store.write { transaction in
            try transaction.markEventsPublished(through: 4)
            // What the budget's pruner does for unpublished events (with its permit).
            try transaction.connection.run("INSERT INTO event_prune_permit (id) VALUES (1)")
            try transaction.connection.run("DELETE FROM events WHERE seq BETWEEN 5 AND 7")
            try transaction.connection.run("DELETE FROM event_prune_permit")
            // Published ones trimmed by retention: the cloud has them, no record needed.
            try transaction.connection.run("DELETE FROM events WHERE seq <= 2")
        }
        let checkpoint = try XCTUnwrap(store.writeAuditCheckpoint(key: key, vehicleID: topics.vehicleID, topic: topics.audit, time: EventTime(seconds: 1, trusted: false)))
        XCTAssertEqual(checkpoint.pruned.map { [$0.from, $0.to] }, [[1, 2], [5, 7]], "every gap since the chain began")
        let again = try XCTUnwrap(store.writeAuditCheckpoint(key: key, vehicleID: topics.vehicleID, topic: topics.audit, time: EventTime(seconds: 2, trusted: false)))
        XCTAssertEqual(again.pruned, [], "reported once")
        let report = verify(lines + [checkpoint.json])
        XCTAssertEqual(report.findings, [], report.findings.map(\.line).joined(separator: "\n"))
        XCTAssertTrue(report.notes.contains { $0.contains("5-7 pruned") }, "\(report.notes)")
        XCTAssertEqual(verify(lines).findings.map(\.kind), [.deleted], "without the signed record it is a deletion")
        // A capture that starts after a pruned prefix is a start, not a deletion.
        XCTAssertEqual(verify(Array(lines.dropFirst(4)) + [checkpoint.json]).findings, [])
    }
}

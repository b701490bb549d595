// The append-only event log: sequence numbers, UUIDs, restarts, retention and refusals.
import XCTest
@testable import Drivers
import Protocol

final class StorageEventLogTests: StorageTestCase {
    func testEventsGetContiguousSequenceNumbersAndRandomUUIDs() throws {
        let store = try openStore()
        let written = NewEvent(kind: .accessDecision, time: EventTime(seconds: 1_700_000_123, trusted: false), actor: "00ff",
                               action: EventAction(unlisted: "unlock"), result: "refused", fault: EventFault(code: 15, name: "clockNotTrusted"),
                               detailJSON: "{\"link\":\"ble-1\"}")
        let stored = try (0..<3).map { _ in try store.appendEvent(written) }
        XCTAssertEqual(stored.map(\.seq), [1, 2, 3])
        XCTAssertEqual(Set(stored.map(\.uuid)).count, 3)
        for event in stored {
            let parts = event.uuid.split(separator: "-").map(String.init)
            XCTAssertEqual(parts.map(\.count), [8, 4, 4, 4, 12], event.uuid)
            XCTAssertEqual(parts[2].first, "4", "version 4")
            XCTAssertTrue("89ab".contains(parts[3].first ?? "x"), "RFC 4122 variant")
        }
        XCTAssertEqual(try store.events(), stored)
        XCTAssertEqual(try store.events(since: 1, limit: 1).map(\.seq), [2], "since is exclusive")
        XCTAssertEqual(try store.events(since: 3), [])
        XCTAssertEqual(try store.events().first?.event, written, "every field round-trips")
    }

    func testTheSequenceContinuesAcrossRestarts() throws {
        try (1...3).forEach { _ in try openStore().appendEvent(accessEvent("lock")) }
        let reopened = try openStore()
        XCTAssertEqual(try reopened.lastEventSequence(), 3)
        XCTAssertEqual(try reopened.appendEvent(accessEvent("unlock")).seq, 4)
        XCTAssertEqual(try openStore().events().map(\.seq), [1, 2, 3, 4])
    }

    func testARolledBackAppendTakesNoNumber() throws {
        struct Abort: Error {}
        let store = try openStore()
        try store.appendEvent(accessEvent("lock"))
        XCTAssertThrowsError(try store.write { transaction in
            try transaction.appendEvent(self.accessEvent("unlock"))
            throw Abort()
        })
        XCTAssertEqual(try store.appendEvent(accessEvent("trunk")).seq, 2)
        XCTAssertEqual(try store.events().map(\.event.action), ["lock", "trunk"])
    }

    func testAFailedAppendCaughtInsideALargerWriteLeavesNoGap() throws {
        let store = try openStore()
        var bad = accessEvent("unlock")
        bad.detailJSON = "{broken"
        let seqs = try store.write { transaction -> [Int64] in
            let first = try transaction.appendEvent(self.accessEvent("lock")).seq
            XCTAssertThrowsError(try transaction.appendEvent(bad))
            return [first, try transaction.appendEvent(self.accessEvent("trunk")).seq]
        }
        XCTAssertEqual(seqs, [1, 2])
        XCTAssertEqual(try store.events().map(\.seq), [1, 2])
    }

    func testTrimNeverDeletesUnpublishedEventsAndNumbersAreNeverReused() throws {
        let store = try openStore()
        for index in 1...10 { try store.appendEvent(accessEvent("e\(index)")) }
        XCTAssertEqual(try store.trimEvents(keepingLatest: 2), 0, "nothing published yet")
        try store.markEventsPublished(through: 6)
        try store.markEventsPublished(through: 4)
        XCTAssertEqual(try store.read { try $0.eventsPublishedThrough() }, 6, "the cursor never moves back")
        XCTAssertEqual(try store.trimEvents(keepingLatest: 2), 6, "published ones only")
        XCTAssertEqual(try store.events().map(\.seq), [7, 8, 9, 10])
        try store.markEventsPublished(through: 99)
        XCTAssertEqual(try store.read { try $0.eventsPublishedThrough() }, 10, "capped at the last event")
        XCTAssertEqual(try store.trimEvents(keepingLatest: 2), 2)
        XCTAssertEqual(try store.trimEvents(keepingLatest: 0), 2)
        XCTAssertEqual(try store.events(), [])
        XCTAssertEqual(try store.appendEvent(accessEvent("after")).seq, 11, "never reused after deletion")
        XCTAssertEqual(try openStore().appendEvent(accessEvent("restart")).seq, 12)
    }

    func testTheSchemaRefusesEditsThatBypassTheAPI() throws {
        let store = try openStore()
        try store.appendEvent(accessEvent("unlock"))
        XCTAssertThrowsError(try rawSQL("UPDATE events SET result = 'allowed' WHERE seq = 1")) { error in
            XCTAssertTrue((error as? SQLiteError)?.message.contains("append-only") == true, "\(error)")
        }
        XCTAssertThrowsError(try rawSQL("DELETE FROM events WHERE seq = 1")) { error in
            XCTAssertTrue((error as? SQLiteError)?.message.contains("unpublished") == true, "\(error)")
        }
        XCTAssertThrowsError(try rawSQL("UPDATE counters SET value = 0 WHERE name = 'event_seq'"))
        XCTAssertEqual(try store.events().count, 1)
        XCTAssertEqual(try store.appendEvent(accessEvent("lock")).seq, 2)
    }

    func testInvalidEventsAreRefusedWithoutEchoingThem() throws {
        let store = try openStore()
        let secret = "s3cr3t-pairing-code-493817"
        var event = accessEvent("unlock")
        event.detailJSON = "{not json \(secret)"
        XCTAssertThrowsError(try store.appendEvent(event)) { error in
            XCTAssertFalse("\(error)".contains(secret), "\(error)")
        }
        XCTAssertThrowsError(try store.appendEvent(accessEvent("unlock", actor: "not hex")))
        XCTAssertThrowsError(try store.appendEvent(accessEvent("")))
        event.detailJSON = "\"" + String(repeating: "x", count: NewEvent.maximumDetailLength) + "\""
        XCTAssertThrowsError(try store.appendEvent(event))
        XCTAssertEqual(try store.lastEventSequence(), 0, "nothing was written, no number was taken")
    }
}

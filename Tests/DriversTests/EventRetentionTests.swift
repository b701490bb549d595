// Retention is keyed by the same typed kinds and actions the writers use: every word of the
// vocabulary gets the class the documents give it, the SQL the pruner selects with agrees with
// the Swift rule for every one, and no source file writes an action outside the vocabulary
// (the string spelling "user-verified" once kept every userVerified decision as critical).
import XCTest
import Foundation
@testable import Drivers
import Protocol

final class EventRetentionTests: StorageTestCase {
    static let kinds: [EventKind] = [.accessDecision, .enrollment, .share, .revocation, .tamper, .actuatorFault, .storage,
                                     .vehicleState, .service, .proximity, .config]

    /// The documented class (docs/operations.md, "Order"): session noise is sessions and the
    /// status and userVerified commands; access decisions, refusals, tamper, keychain changes,
    /// actuator faults, service actions and the store's own pruning and disk-full records are
    /// critical; the rest ordinary.
    static func expected(_ kind: EventKind, _ action: EventAction) -> EventRetention {
        switch kind {
        case .accessDecision:
            return [EventAction.session, .command(.status), .command(.userVerified)].contains(action) ? .noise : .critical
        case .tamper, .revocation, .enrollment, .share, .actuatorFault, .service: return .critical
        case .storage: return [EventAction.pruneEvents, .diskFull].contains(action) ? .critical : .ordinary
        default: return .ordinary
        }
    }

    private func event(_ kind: EventKind, _ action: EventAction) -> NewEvent {
        NewEvent(kind: kind, time: EventTime(seconds: 1_700_000_000, trusted: true), action: action, result: "ok")
    }

    func testUserVerifiedDecisionsAreNoiseLikeStatusReads() {
        XCTAssertEqual(EventRetention.of(event(.accessDecision, .command(.userVerified))), .noise)
        XCTAssertEqual(EventRetention.of(event(.accessDecision, .command(.status))), .noise)
        XCTAssertEqual(EventRetention.of(event(.accessDecision, .command(.unlock))), .critical)
    }

    func testEveryKindAndActionOfTheVocabularyHasItsDocumentedClass() {
        XCTAssertGreaterThan(EventAction.vocabulary.count, 30)
        for kind in Self.kinds {
            for action in EventAction.vocabulary {
                XCTAssertEqual(EventRetention.of(event(kind, action)), Self.expected(kind, action), "\(kind) \(action)")
            }
        }
    }

    /// The pruner's SQL CASE gives every row of the vocabulary the same class as the Swift rule.
    func testTheSQLExpressionAgreesWithTheSwiftRuleForEveryWord() throws {
        let store = try openStore()
        var expected: [Int64: EventRetention] = [:]
        for kind in Self.kinds {
            for action in EventAction.vocabulary {
                let stored = try store.appendEvent(event(kind, action))
                expected[stored.seq] = EventRetention.of(event(kind, action))
            }
        }
        let classes: [Int64: Int64] = try store.database.read { connection in
            let statement = try connection.prepare("SELECT seq, \(EventRetention.sqlExpression) FROM events")
            var out: [Int64: Int64] = [:]
            while try statement.step() { out[statement.int64(0)] = statement.int64(1) }
            return out
        }
        XCTAssertEqual(classes.count, expected.count)
        for (seq, retention) in expected { XCTAssertEqual(classes[seq], retention.rawValue, "row \(seq)") }
    }

    /// Sources write only vocabulary words: `EventAction(unlisted:)` is for tests and tools.
    func testNoSourceFileWritesAnUnlistedAction() throws {
        let parts = #filePath.split(separator: "/", omittingEmptySubsequences: false)
        let root = parts.dropLast(3).joined(separator: "/") + "/Sources"
        let files = try XCTUnwrap(FileManager.default.enumerator(atPath: root)).compactMap { $0 as? String }
            .filter { $0.hasSuffix(".swift") }
        XCTAssertGreaterThan(files.count, 100)
        for file in files where !file.hasSuffix("Storage/Events/EventAction.swift") {
            let text = try String(contentsOfFile: root + "/" + file, encoding: .utf8)
            XCTAssertFalse(text.contains("EventAction(unlisted:"), file)
        }
    }
}

// Every record the engine can audit, as the agent writes it, gets the retention class the
// documents give it: routine session records and the status and userVerified commands are
// noise, every other access decision, enrollment and revocation critical. Written against
// AuditEventMapping itself, so a rename on either side fails here, not on a full disk.
import XCTest
import Drivers
@testable import Protocol
@testable import carkey_agent

final class AuditEventRetentionTests: XCTestCase {
    private static func expected(_ event: AuditRecord.Event, _ command: CommandCode?) -> EventRetention {
        switch event {
        case .pairingWindowOpened, .pairingWindowClosed, .ownerEnrolled, .revocationApplied:
            return .critical
        case .sessionEstablished, .sessionClosed:
            return command.map { [.status, .userVerified].contains($0) ? .noise : .critical } ?? .noise
        default:
            return command.map { [.status, .userVerified].contains($0) ? .noise : .critical } ?? .critical
        }
    }

    func testEveryAuditRecordIsWrittenWithItsDocumentedRetention() {
        let now = ProtocolTime(monotonicMillis: 1, wallSeconds: 1_700_000_000, wallClockTrusted: true)
        var checked = 0
        for event in AuditRecord.Event.allCases {
            for command in [nil] + CommandCode.allCases.map(Optional.some) {
                let record = AuditRecord(event, link: LinkID(1), keyID: nil, command: command, now: now)
                let row = AuditEventMapping.event(for: record)
                XCTAssertEqual(EventRetention.of(row), Self.expected(event, command), "\(event) \(command.map(\.name) ?? "-")")
                checked += 1
            }
        }
        XCTAssertEqual(checked, AuditRecord.Event.allCases.count * (CommandCode.allCases.count + 1))
    }

    func testACompletedUserVerificationIsNoise() {
        let now = ProtocolTime(monotonicMillis: 1, wallSeconds: 1_700_000_000, wallClockTrusted: true)
        let row = AuditEventMapping.event(for: AuditRecord(.commandCompleted, link: LinkID(1), keyID: nil, command: .userVerified, now: now))
        XCTAssertEqual(row.action, CommandCode.userVerified.name)
        XCTAssertEqual(EventRetention.of(row), .noise)
    }

    /// The coalescer's summary rows are session noise; the car-wide rate-limit summary is a refusal.
    func testSummaryRowsKeepTheirClasses() {
        let time = EventTime(seconds: 1_700_000_000, trusted: true)
        let keySummary = AuditCoalescer.Summary(scope: .key(nil), counts: .init(), windowMillis: 60_000)
        XCTAssertEqual(EventRetention.of(AuditEventMapping.summary(keySummary, time: time)), .noise)
        let refusals = AuditCoalescer.Summary(scope: .rateLimited, counts: .init(), windowMillis: 60_000)
        XCTAssertEqual(EventRetention.of(AuditEventMapping.summary(refusals, time: time)), .critical)
    }
}

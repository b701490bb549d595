// Per-key coalescing of routine audit records: a lock-only share looping status commands
// writes a bounded number of rows plus a summary carrying the count, while an owner's unlock
// in the middle of the flood is itemised; the per-key table stays bounded.
import XCTest
import Drivers
@testable import Protocol
@testable import carkey_agent

final class AuditCoalescingTests: XCTestCase {
    func testAStatusFloodFromAShareIsFoldedAndAnOwnerUnlockStaysItemised() throws {
        let owner = try P256PrivateKey.generate(), share = try P256PrivateKey.generate()
        let car = try InProcessCar(keys: [KeyRecord(publicKey: owner.publicKey, role: .owner, permissions: .all),
                                          KeyRecord(publicKey: share.publicKey, role: .shared, permissions: .lock)])
        let sessions = 50, commandsPerSession = 20
        for index in 0..<sessions {
            let phone = try car.phone(share)
            try visit(phone, car: car, commands: Array(repeating: .status, count: commandsPerSession))
            if index == sessions / 2 {
                try visit(try car.phone(owner), car: car, commands: [.unlock])
            }
        }
        car.stop()

        let budget = AuditCoalescer.keyPolicy.budget
        let routine = sessions * (commandsPerSession + 2) // established + status... + closed
        let rows = try car.rows(of: share)
        XCTAssertEqual(rows.count, budget + 1, "\(budget) itemised rows, then one summary")
        let summary = try XCTUnwrap(rows.last)
        XCTAssertEqual(summary.event.result, "coalesced")
        let detail = try XCTUnwrap(summary.event.detailJSON)
        XCTAssertTrue(detail.hasPrefix(#"{"event":"coalesced","suppressed":\#(routine - budget),"windowSeconds":60,"#), detail)
        XCTAssertTrue(detail.contains(#""refused":0}"#), detail)

        // The owner's visit in the middle of the flood: every row of its own.
        XCTAssertEqual(try car.rows(of: owner).map { "\($0.event.action) \($0.event.result)" },
                       ["session established", "unlock accepted", "unlock ok", "session closed"])
        XCTAssertEqual(car.moves("unlock"), 2)
    }

    /// One visit: handshake, the commands one after the other, then the phone hangs up and
    /// the car notices.
    private func visit(_ phone: TestPhone, car: InProcessCar, commands: [CommandCode]) throws {
        try phone.sendHello()
        for expected in ["Challenge", "SessionAccepted"] {
            try car.pump(expected) { try phone.hasMessage() }
            _ = try phone.take()
        }
        XCTAssertTrue(phone.isEstablished)
        for command in commands {
            try phone.sendCommand(command)
            try car.pump("\(command) Response") { try phone.hasMessage() }
            guard case .response(let body) = try phone.take(), body.isOK else { return XCTFail("\(command) refused") }
        }
        phone.close()
        try car.pump("the car sees the link close") { car.server.links.isEmpty }
    }

    // MARK: The coalescer alone

    private let now = ProtocolTime(monotonicMillis: 1_000, wallSeconds: 1_800_000_000, wallClockTrusted: false)

    private func record(_ event: AuditRecord.Event, key: Int?, command: CommandCode? = nil, fault: FaultCode? = nil,
                        at millis: UInt64 = 1_000) -> AuditRecord {
        let keyID = key.map { try! KeyID(bytes: Bytes(repeating: UInt8($0 & 0xFF), count: 7) + [UInt8($0 >> 8)]) }
        return AuditRecord(event, link: LinkID(1), keyID: keyID, command: command, fault: fault,
                           now: ProtocolTime(monotonicMillis: millis, wallSeconds: 1_800_000_000, wallClockTrusted: false))
    }

    func testDecisionsThatMoveOrChangeKeysAreNeverFolded() {
        var coalescer = AuditCoalescer(keyPolicy: .init(budget: 2, windowMillis: 60_000))
        for _ in 0..<5 { _ = coalescer.admit(record(.sessionEstablished, key: 1)) }
        let always: [AuditRecord] = [
            record(.commandAccepted, key: 1, command: .unlock), record(.commandCompleted, key: 1, command: .unlock),
            record(.commandCompleted, key: 1, command: .lock, fault: .actuationFailed), record(.commandCompleted, key: 1, command: .revoke),
            record(.completionDropped, key: 1, command: .trunkRelease), record(.sessionClosed, key: 1, fault: .revoked),
            record(.pairingWindowOpened, key: nil), record(.pairingWindowClosed, key: nil),
        ]
        for record in always + always { XCTAssertEqual(coalescer.admit(record).verdict, .write, "\(record)") }
        XCTAssertEqual(coalescer.admit(record(.commandCompleted, key: 1, command: .status)).verdict, .fold)
    }

    func testRepeatedRefusalsAreFoldedButANewKindIsWritten() {
        var coalescer = AuditCoalescer(keyPolicy: .init(budget: 1, windowMillis: 60_000))
        XCTAssertEqual(coalescer.admit(record(.rejected, key: 7, command: .unlock, fault: .insufficientPermission)).verdict, .write)
        XCTAssertEqual(coalescer.admit(record(.rejected, key: 7, command: .unlock, fault: .insufficientPermission)).verdict, .fold)
        XCTAssertEqual(coalescer.admit(record(.rejected, key: 7, command: .trunkRelease, fault: .insufficientPermission)).verdict, .write)
        XCTAssertEqual(coalescer.admit(record(.rejected, key: 7, command: .trunkRelease, fault: .insufficientPermission)).verdict, .fold)
        XCTAssertEqual(coalescer.admit(record(.rejected, key: 8, command: .unlock, fault: .insufficientPermission)).verdict, .write,
                       "another key has its own budget")
        // The window ends: its counts come out before the next record, and the budget is fresh.
        let later = coalescer.admit(record(.rejected, key: 7, command: .unlock, fault: .insufficientPermission, at: 61_000))
        XCTAssertEqual(later.verdict, .write)
        XCTAssertEqual(later.summaries.map(\.counts.refusals), [2])
    }

    func testTheKeyTableIsBoundedAndEvictedCountsAreNotLost() {
        var coalescer = AuditCoalescer(keyPolicy: .init(budget: 3, windowMillis: 60_000), maxKeys: 16)
        var written = 0, summarised = 0, total = 0
        for key in 0..<1_000 {
            for step in 0..<10 {
                let result = coalescer.admit(record(.sessionEstablished, key: key, at: 1_000 + UInt64(key * 10 + step)))
                total += 1
                if result.verdict == .write { written += 1 }
                summarised += result.summaries.map(\.counts.total).reduce(0, +)
                XCTAssertLessThanOrEqual(coalescer.trackedKeys, 16)
            }
        }
        summarised += coalescer.due(nowMillis: 20_000, force: true).map(\.counts.total).reduce(0, +)
        XCTAssertEqual(coalescer.trackedKeys, 0)
        XCTAssertEqual(written, 3 * 1_000)
        XCTAssertEqual(written + summarised, total, "every record is written or counted in a summary")
    }

    func testRateLimitedRefusalsShareOneCarWideBucket() {
        var coalescer = AuditCoalescer()
        XCTAssertEqual(coalescer.admit(record(.rejected, key: 1, fault: .rateLimited)).verdict, .write)
        XCTAssertEqual(coalescer.admit(record(.rejected, key: nil, fault: .rateLimited)).verdict, .fold)
        XCTAssertEqual(coalescer.admit(record(.rejected, key: 2, fault: .rateLimited)).verdict, .fold)
        XCTAssertEqual(coalescer.due(nowMillis: 5_000), [], "the 10 s window is still open")
        let due = coalescer.due(nowMillis: 11_000)
        XCTAssertEqual(due.map(\.scope), [.rateLimited])
        XCTAssertEqual(due.map(\.counts.refusals), [2])
        let row = AuditEventMapping.summary(try! XCTUnwrap(due.first), time: EventTime(seconds: 1_800_000_000, trusted: false))
        XCTAssertEqual(row.detailJSON, #"{"event":"rejected","suppressed":2}"#)
        XCTAssertEqual(row.fault?.name, "rateLimited")
    }
}

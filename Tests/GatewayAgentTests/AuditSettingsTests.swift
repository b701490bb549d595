// The "audit" object of the agent config and --audit-routine-per-minute: the per-key budget of
// itemised routine records, its default, errors that name the key, and that it reaches the
// coalescer (an actuation is never folded whatever it says).
import XCTest
import CommandLineKit
@testable import Protocol
@testable import carkey_agent

final class AuditSettingsTests: XCTestCase {
    private func parse(_ json: String) throws(ConfigError) -> AgentConfig {
        try AgentConfig.parse(Array(json.utf8), baseDirectory: "/etc/opencarkey")
    }

    func testDefaultFileValueAndFlag() throws {
        XCTAssertNil(try parse("{}").auditRoutinePerMinute)
        XCTAssertEqual(try parse(#"{"audit":{"routineRecordsPerKeyPerMinute":600}}"#).auditRoutinePerMinute, 600)
        let parser = ArgumentParser(options: AuditSettings.optionSpecs)
        XCTAssertEqual(try AuditSettings.parse(try parser.parse([]), file: nil), 24)
        XCTAssertEqual(try AuditSettings.parse(try parser.parse([]), file: 600), 600)
        XCTAssertEqual(try AuditSettings.parse(try parser.parse(["--audit-routine-per-minute", "5"]), file: 600), 5)
        XCTAssertThrowsError(try AuditSettings.parse(try parser.parse(["--audit-routine-per-minute", "0"]), file: nil))
    }

    func testErrorsNameTheKey() {
        func key(_ json: String) -> String? {
            do { _ = try parse(json); return nil } catch { return error.key }
        }
        XCTAssertEqual(key(#"{"audit":{"routineRecordsPerKeyPerMinute":0}}"#), "audit.routineRecordsPerKeyPerMinute")
        XCTAssertEqual(key(#"{"audit":{"routinePerMinute":5}}"#), "audit.routinePerMinute", "a typo is not a silent default")
    }

    func testTheBudgetReachesTheCoalescer() {
        let keyID = try! KeyID(bytes: Bytes(repeating: 7, count: 8))
        func written(_ coalescer: inout AuditCoalescer, _ count: Int) -> Int {
            (0..<count).filter { i in
                let record = AuditRecord(.sessionEstablished, link: LinkID(1), keyID: keyID,
                                         now: ProtocolTime(monotonicMillis: UInt64(1_000 + i), wallSeconds: 1_800_000_000, wallClockTrusted: true))
                return coalescer.admit(record).verdict == .write
            }.count
        }
        var strict = AuditSettings.coalescer(perMinute: 3)
        XCTAssertEqual(written(&strict, 10), 3)
        var generous = AuditSettings.coalescer(perMinute: 1000)
        XCTAssertEqual(written(&generous, 10), 10)
    }
}

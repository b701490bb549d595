// The "store" object of the agent config and the --store-* flags: defaults, units, and errors
// that name the key.
import XCTest
import CommandLineKit
import Drivers
@testable import carkey_agent

final class StoreSettingsTests: XCTestCase {
    private func parse(_ json: String) throws(ConfigError) -> AgentConfig {
        try AgentConfig.parse(Array(json.utf8), baseDirectory: "/etc/opencarkey")
    }

    func testDefaultsSuitAnSDCard() throws {
        let budget = try parse("{}").store
        XCTAssertEqual(budget.maxDatabaseBytes, 64 << 20)
        XCTAssertEqual(budget.reserveBytes, 8 << 20)
        XCTAssertEqual(budget.maxEventAgeSeconds, 90 * 86_400)
        XCTAssertEqual(budget.maxCriticalEventAgeSeconds, 730 * 86_400)
    }

    func testTheStoreObjectInMiBAndDays() throws {
        let budget = try parse(#"{"store":{"maxSizeMiB":16,"reserveMiB":0,"maxEventAgeDays":30,"maxCriticalEventAgeDays":365}}"#).store
        XCTAssertEqual(budget, StoreBudget(maxDatabaseBytes: 16 << 20, reserveBytes: 0, maxEventAgeSeconds: 30 * 86_400,
                                           maxCriticalEventAgeSeconds: 365 * 86_400))
    }

    func testErrorsNameTheKey() {
        func key(_ json: String) -> String? {
            do { _ = try parse(json); return nil } catch { return error.key }
        }
        XCTAssertEqual(key(#"{"store":{"maxSizeMiB":0}}"#), "store.maxSizeMiB")
        XCTAssertEqual(key(#"{"store":{"reserveMiB":-1}}"#), "store.reserveMiB")
        XCTAssertEqual(key(#"{"store":{"maxSizeMB":8}}"#), "store.maxSizeMB", "a typo is not a silent default")
        XCTAssertEqual(key(#"{"store":{"maxEventAgeDays":30,"maxCriticalEventAgeDays":7}}"#), "store.maxCriticalEventAgeDays",
                       "access decisions are never kept shorter than noise")
        XCTAssertEqual(key(#"{"store":{"maxEventAgeDays":1000}}"#), "store.maxEventAgeDays")
        XCTAssertEqual(key(#"{"store":8}"#), "store")
    }

    func testFlagsOverTheFile() throws {
        let parser = ArgumentParser(options: StoreSettings.optionSpecs)
        let arguments = try parser.parse(["--store-max-mib", "2", "--store-reserve-mib", "1"])
        let budget = try StoreSettings.parse(arguments, file: StoreBudget(maxDatabaseBytes: 16 << 20))
        XCTAssertEqual(budget.maxDatabaseBytes, 2 << 20)
        XCTAssertEqual(budget.reserveBytes, 1 << 20)
        XCTAssertThrowsError(try StoreSettings.parse(try parser.parse(["--store-max-mib", "0"]), file: StoreBudget()))
    }
}

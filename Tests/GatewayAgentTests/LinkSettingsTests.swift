// The "link" object of the agent config and --ble: defaults (the simulated link), every key,
// errors that name the key, the flag on top of the file, and adapter names.
import XCTest
import CommandLineKit
@testable import carkey_agent

final class LinkSettingsTests: XCTestCase {
    private func parse(_ json: String) throws(ConfigError) -> AgentConfig {
        try AgentConfig.parse(Array(json.utf8), baseDirectory: "/etc/opencarkey")
    }

    func testDefaultsAreTheSimulatedLinkWithAGenericName() throws {
        let link = try parse("{}").link
        XCTAssertEqual(link.transport, .unix)
        XCTAssertEqual(link.name, "OpenCarKey", "no VIN or plate in the advertisement by default")
        XCTAssertTrue(link.privacy)
        XCTAssertEqual(link.idleTimeoutSeconds, 60)
    }

    func testEveryKeyIsRead() throws {
        let link = try parse(#"{"link":{"transport":"ble","adapter":"hci1","name":"Fleet car","maxLinks":3,"idleTimeoutSeconds":20,"privacy":false,"identifierRotationMinutes":5}}"#).link
        XCTAssertEqual(link, LinkSettings(transport: .ble, adapter: "hci1", name: "Fleet car", maxLinks: 3, idleTimeoutSeconds: 20,
                                          privacy: false, identifierRotationMinutes: 5))
    }

    func testErrorsNameTheKey() {
        func key(_ json: String) -> String? {
            do { _ = try parse(json); return nil } catch { return error.key }
        }
        XCTAssertEqual(key(#"{"link":{"transport":"wifi"}}"#), "link.transport")
        XCTAssertEqual(key(#"{"link":{"adapter":"hciX"}}"#), "link.adapter")
        XCTAssertEqual(key(#"{"link":{"adapter":"00:11:22:33:44"}}"#), "link.adapter")
        XCTAssertEqual(key(#"{"link":{"name":""}}"#), "link.name")
        XCTAssertEqual(key(#"{"link":{"name":"a name far longer than twenty"}}"#), "link.name")
        XCTAssertEqual(key(#"{"link":{"maxLinks":9}}"#), "link.maxLinks")
        XCTAssertEqual(key(#"{"link":{"idleTimeoutSeconds":1}}"#), "link.idleTimeoutSeconds")
        XCTAssertEqual(key(#"{"link":{"privacy":"yes"}}"#), "link.privacy")
        XCTAssertEqual(key(#"{"link":{"identifierRotationMinutes":0}}"#), "link.identifierRotationMinutes")
        XCTAssertEqual(key(#"{"link":{"adapters":"hci0"}}"#), "link.adapters", "a typo is not a silent default")
    }

    func testTheBLEFlagSelectsBLEOnTopOfTheFile() throws {
        let parser = ArgumentParser(options: LinkSettings.optionSpecs)
        let file = try parse(#"{"link":{"name":"Fleet car"}}"#).link
        XCTAssertEqual(try LinkSettings.parse(try parser.parse([]), file: file).transport, .unix)
        let ble = try LinkSettings.parse(try parser.parse(["--ble", "2"]), file: file)
        XCTAssertEqual([ble.transport.rawValue, ble.adapter, ble.name], ["ble", "2", "Fleet car"])
        XCTAssertThrowsError(try LinkSettings.parse(try parser.parse(["--ble", "bluetooth0"]), file: file))
    }

    func testAdapterSelectors() {
        XCTAssertEqual(AdapterSelector("hci0"), .index(0))
        XCTAssertEqual(AdapterSelector("12"), .index(12))
        XCTAssertEqual(AdapterSelector("00:aa:01:00:00:00"), .address("00:AA:01:00:00:00"))
        XCTAssertNil(AdapterSelector("hci"))
        XCTAssertNil(AdapterSelector("hci65535"), "0xFFFF is HCI_DEV_NONE, not an adapter")
        XCTAssertNil(AdapterSelector("00:aa:01:00:00:0g"))
    }
}

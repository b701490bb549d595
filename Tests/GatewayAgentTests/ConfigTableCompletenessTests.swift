// board/README.md's config table ("Agent config file") lists every key the parser accepts, so a
// section added to the parser without a row (as mqtt, remote, proximity and vault once were)
// fails here, and so does a row for a key the parser no longer knows.
import XCTest
import Drivers
@testable import carkey_agent

final class ConfigTableCompletenessTests: XCTestCase {
    /// The keys in the first column of the table: `name` or `section.name`, several per cell
    /// when a row covers a pair (`mqtt.cert`, `mqtt.key`).
    private func documentedKeys() throws -> Set<String> {
        let text = String(decoding: try Files.read(AgentConfigTests.repositoryRoot + "/board/README.md", limit: 1 << 20), as: UTF8.self)
        let section = try XCTUnwrap(text.range(of: "## Agent config file"), "the section exists")
        var keys: Set<String> = []
        var inTable = false
        for line in text[section.upperBound...].split(separator: "\n", omittingEmptySubsequences: false) {
            if line.hasPrefix("## ") { break }
            if line.hasPrefix("| Key |") { inTable = true; continue }
            guard inTable else { continue }
            guard line.hasPrefix("|") else { if !keys.isEmpty { break } else { continue } }
            let cells = line.split(separator: "|", omittingEmptySubsequences: false)
            guard cells.count > 1 else { continue }
            for piece in cells[1].split(separator: "`", omittingEmptySubsequences: false).enumerated() where piece.offset % 2 == 1 {
                keys.insert(String(piece.element))
            }
        }
        return keys
    }

    /// Every key the parser accepts, as `section.key` (the object names themselves excluded).
    private func parserKeys() -> Set<String> {
        let sections: [String: Set<String>] = [
            "console": AgentConfig.consoleKeys, "service": AgentConfig.serviceKeys, "mqtt": AgentConfig.mqttKeys,
            "store": StoreSettings.keys, "link": LinkSettings.keys, "proximity": ProximitySettings.keys,
            "remote": RemoteSettings.keys, "vault": VaultSettings.keys, "audit": AuditSettings.keys,
        ]
        XCTAssertEqual(Set(sections.keys).union(["description", "vehicleID", "stateDirectory", "board", "logLevel"]), AgentConfig.topLevelKeys,
                       "a new top-level object needs its keys listed here")
        var keys = AgentConfig.topLevelKeys.subtracting(sections.keys)
        for (section, names) in sections {
            keys.formUnion(names.map { section + "." + $0 })
        }
        return keys
    }

    func testTheBoardReadmeTableListsEveryConfigKey() throws {
        let documented = try documentedKeys()
        let accepted = parserKeys()
        XCTAssertEqual(accepted.subtracting(documented).sorted(), [], "keys the parser accepts without a row in board/README.md")
        XCTAssertEqual(documented.subtracting(accepted).sorted(), [], "rows for keys the parser does not accept")
    }
}

// board/README.md's agent config table against the readers: every key of the "link" and "remote"
// objects has a row, and the rows state the defaults and ranges the code has.
import XCTest
import Drivers
@testable import carkey_agent

final class ConfigDocumentationTests: XCTestCase {
    /// The config table's row for `key` ("| `link.name` | ... |"), or nil.
    private func row(_ key: String) throws -> String? {
        let bytes = try Files.read(AgentConfigTests.repositoryRoot + "/board/README.md")
        return String(decoding: bytes, as: UTF8.self).split(separator: "\n")
            .first { $0.hasPrefix("| `\(key)` |") }.map(String.init)
    }

    /// The row's cells after the key: flag, default, values.
    private func cells(_ key: String, file: StaticString = #filePath, line: UInt = #line) throws -> [String] {
        let text = try XCTUnwrap(try row(key), "board/README.md has no row for \(key)", file: file, line: line)
        return text.split(separator: "|", omittingEmptySubsequences: false).dropFirst(2).dropLast()
            .map { $0.trimmingCharacters(in: " ") }
    }

    func testEveryLinkAndRemoteKeyHasARow() throws {
        for key in LinkSettings.keys.sorted() { XCTAssertNotNil(try row("link.\(key)"), "link.\(key)") }
        for key in RemoteSettings.keys.sorted() { XCTAssertNotNil(try row("remote.\(key)"), "remote.\(key)") }
    }

    func testTheHandshakeDeadlineRowStatesTheDefaultAndRange() throws {
        let cells = try cells("link.handshakeDeadlineSeconds")
        XCTAssertEqual(cells[1], "\(LinkSettings().handshakeDeadlineSeconds)")
        let range = LinkSettings.handshakeDeadlineRange
        XCTAssertTrue(cells[2].hasPrefix("\(range.lowerBound) to \(range.upperBound):"), cells[2])
        XCTAssertTrue(cells[2].contains("over BLE and on the simulated link"), cells[2])
    }

    func testTheRemoteRowsStateTheDefaults() throws {
        let defaults = RemoteSettings()
        XCTAssertEqual(try cells("remote.allowUnlock")[1], "`\(defaults.allowUnlock)`")
        XCTAssertEqual(try cells("remote.refuseDuringServiceMode")[1], "`\(defaults.refuseDuringServiceMode)`")
        XCTAssertEqual(try cells("remote.autoRelockSeconds")[1], "\(defaults.autoRelockSeconds)")
        let range = RemoteSettings.autoRelockRange
        XCTAssertTrue(try cells("remote.autoRelockSeconds")[2].hasPrefix("\(range.lowerBound) (off) to \(range.upperBound):"))
        XCTAssertEqual(try cells("remote.fleetKeys")[1], "none")
        XCTAssertTrue(try cells("remote.fleetKeys")[2].hasPrefix("up to \(RemoteSettings.maxFleetKeys) "))
    }
}

private extension Substring {
    func trimmingCharacters(in character: Character) -> String {
        String(drop { $0 == character }.reversed().drop { $0 == character }.reversed())
    }
}

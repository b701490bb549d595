// What the agent tells phones about its UWB module (docs/protocol.md 19.2, rangingCapabilities)
// and that the known-answer example of 19.9 is one the shipped boards accept: both read from
// the document, so the example cannot drift to values no car in this repository takes.
import Foundation
import XCTest
import Drivers
import Protocol
@testable import carkey_agent

final class UWBServiceCapabilitiesTests: XCTestCase {
    private static let root = #filePath.components(separatedBy: "/Tests/")[0]

    /// The hex block under the bold label `**name**` in docs/protocol.md.
    private func documented(_ name: String) throws -> Bytes {
        let doc = try String(contentsOfFile: Self.root + "/docs/protocol.md", encoding: .utf8)
        let start = try XCTUnwrap(doc.range(of: "**\(name)**"), "docs/protocol.md has no \(name)")
        let rest = doc[start.upperBound...]
        let open = try XCTUnwrap(rest.range(of: "```\n"))
        let close = try XCTUnwrap(rest.range(of: "```", range: open.upperBound..<rest.endIndex))
        return try XCTUnwrap(Bytes(hex: rest[open.upperBound..<close.lowerBound].replacingOccurrences(of: "\n", with: "")))
    }

    func testTheDefaultBoardAnswersTheDocumentedCapabilities() throws {
        let capabilities = UWBService.capabilities(for: BoardUWB(spidev: "/dev/spidev0.0"))
        XCTAssertEqual(capabilities.encoded(), try documented("default board capabilities"))
    }

    func testEveryShippedBoardAcceptsTheDocumentedSetup() throws {
        let setup = try RangingSetup.decode(try documented("rangingSetup arguments"))
        XCTAssertNoThrow(try UWBService.capabilities(for: BoardUWB(spidev: "/dev/spidev0.0")).check(setup), "the default board")
        for name in ["raspberrypi4-uwb", "raspberrypi5-uwb", "sk-tda4vm"] {
            let board = try BoardDescription.load(path: Self.root + "/board/\(name).json")
            let uwb = try XCTUnwrap(board.uwb, name)
            XCTAssertNoThrow(try UWBService.capabilities(for: uwb).check(setup), "\(name) accepts the 19.9 setup")
        }
    }
}

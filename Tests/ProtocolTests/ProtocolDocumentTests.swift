// The parts of docs/protocol.md that summarise the code rather than define a format: the
// versions under the title and section 17's lists of what sections 18 and 19 add. Both are
// computed here from the code's message types, commands and fault codes.
import Foundation
import XCTest
@testable import Protocol

final class ProtocolDocumentTests: XCTestCase {
    /// The messages, commands and faults of sections 5 to 9 and 14's first 27 codes.
    static let baseMessages: Set<UInt8> = [0x01, 0x02, 0x03, 0x10, 0x11, 0x7F, 0xAA]
    static let baseCommands: Set<UInt8> = [0x01, 0x02, 0x03, 0x04, 0x05]
    static let baseFaults: Set<UInt16> = Set(1...27)

    private func section17() throws -> String {
        let doc = try XCTUnwrap(readRepositoryFile("docs/protocol.md"), "docs/protocol.md missing")
        let start = try XCTUnwrap(doc.range(of: "\n## 17. "), "no section 17")
        let end = try XCTUnwrap(doc.range(of: "\n## 18. ", range: start.upperBound..<doc.endIndex))
        return String(doc[start.upperBound..<end.lowerBound])
    }

    /// The list item of section 17 that starts with `- **name**`, joined over its lines.
    private func item(_ name: String, in section: String) throws -> String {
        let start = try XCTUnwrap(section.range(of: "- **\(name)**"), "section 17 has no \(name) item")
        let rest = section[start.upperBound...]
        let end = rest.range(of: "\n- ")?.lowerBound ?? rest.range(of: "\n\n")?.lowerBound ?? rest.endIndex
        return rest[..<end].replacingOccurrences(of: "\n", with: " ")
    }

    /// `0xNN` values, with "`0xAA` to `0xBB`" as a range (parenthesised remarks are skipped).
    private func hexValues(_ text: String) -> Set<UInt8> {
        let text = text.replacingOccurrences(of: #"\([^)]*\)"#, with: "", options: .regularExpression)
        var values = Set<UInt8>()
        let pattern = try! NSRegularExpression(pattern: "`0x([0-9A-Fa-f]{2})`( to `0x([0-9A-Fa-f]{2})`)?")
        for match in pattern.matches(in: text, range: NSRange(text.startIndex..., in: text)) {
            let low = UInt8(text[Range(match.range(at: 1), in: text)!], radix: 16)!
            let high = Range(match.range(at: 3), in: text).map { UInt8(text[$0], radix: 16)! } ?? low
            values.formUnion(low...high)
        }
        return values
    }

    /// Numbers, with "A to B" as a range (parenthesised section references are skipped).
    private func numbers(_ text: String) -> Set<UInt16> {
        let plain = text.replacingOccurrences(of: #"\([^)]*\)"#, with: "", options: .regularExpression)
        var values = Set<UInt16>()
        let pattern = try! NSRegularExpression(pattern: #"(\d+)( to (\d+))?"#)
        for match in pattern.matches(in: plain, range: NSRange(plain.startIndex..., in: plain)) {
            let low = UInt16(plain[Range(match.range(at: 1), in: plain)!])!
            let high = Range(match.range(at: 3), in: plain).map { UInt16(plain[$0])! } ?? low
            values.formUnion(low...high)
        }
        return values
    }

    func testSection17ListsWhatTheCodeAdds() throws {
        let section = try section17()
        let messages = Set(MessageType.allCases.map(\.rawValue)).subtracting(Self.baseMessages)
        XCTAssertEqual(hexValues(try item("Messages", in: section)), messages, "section 17: message types beyond sections 5 to 9")
        let commands = Set(CommandCode.allCases.map(\.rawValue)).subtracting(Self.baseCommands)
        XCTAssertEqual(hexValues(try item("Commands", in: section)), commands, "section 17: commands beyond section 9")
        let faults = Set(FaultCode.allCases.map(\.rawValue)).subtracting(Self.baseFaults)
        XCTAssertEqual(numbers(try item("Fault codes", in: section)), faults, "section 17: fault codes beyond 27")
    }

    func testTitleStatesTheVersionsTheCodeSpeaks() throws {
        let doc = try XCTUnwrap(readRepositoryFile("docs/protocol.md"), "docs/protocol.md missing")
        let lines = doc.split(separator: "\n", omittingEmptySubsequences: false)
        XCTAssertEqual(lines.first, "# OpenCarKey key protocol", "the title names no version; the line under it does")
        let header = lines.dropFirst().prefix(4).joined(separator: " ")
        XCTAssertTrue(header.contains(String(format: "Message version `0x%02x`", Wire.version)), header)
        XCTAssertTrue(header.contains(String(format: "pairing version `0x%02x`", PairingWire.version)), header)
    }
}

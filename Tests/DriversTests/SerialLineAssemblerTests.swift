// Line assembly from raw bytes: terminators, the length bound, garbage, and line editing.
import XCTest
@testable import Drivers

final class SerialLineAssemblerTests: XCTestCase {
    private func lines(_ bytes: [UInt8], max: Int = 256) -> [LineAssembler.Event] {
        var assembler = LineAssembler(maxLineBytes: max)
        return assembler.feed(bytes)
    }

    func testCRLFAndCRLFAllEndOneLine() {
        XCTAssertEqual(lines(Array("a\r\nb\rc\nd".utf8)), [.line("a"), .line("b"), .line("c")])
        XCTAssertEqual(lines(Array("\r\n\r\n".utf8)), [.line(""), .line("")], "CRLF pairs are one line end each")
        XCTAssertEqual(lines(Array("\r\r\n\n".utf8)), [.line(""), .line(""), .line("")], "CR CR LF LF: CR, CRLF, LF")
    }

    func testCRLFSplitAcrossReadsIsStillOneLineEnd() {
        var assembler = LineAssembler()
        XCTAssertEqual(assembler.feed(Array("status\r".utf8)), [.line("status")])
        XCTAssertEqual(assembler.feed(Array("\nkeys\r".utf8)), [.line("keys")])
    }

    func testALineOfExactlyTheLimitIsAccepted() {
        let exact = String(repeating: "x", count: 256)
        XCTAssertEqual(lines(Array((exact + "\n").utf8)), [.line(exact)])
    }

    func testOverlongLineGivesOneErrorAndIsDiscardedToTheNextLineEnd() {
        var assembler = LineAssembler(maxLineBytes: 16)
        var events = assembler.feed(Array(String(repeating: "A", count: 40).utf8))
        events += assembler.feed(Array(String(repeating: "B", count: 4000).utf8))
        XCTAssertEqual(events, [.tooLong], "one error however long the flood")
        XCTAssertEqual(assembler.pendingByteCount, 0, "discarded bytes are not kept")
        events = assembler.feed(Array("tail-of-flood\r\nhelp\r\n".utf8))
        XCTAssertEqual(events, [.line("help")], "the overlong line's tail is never executed")
    }

    func testNULAndControlBytesAreDroppedAndInvalidUTF8IsReplaced() {
        XCTAssertEqual(lines([0x00, 0x68, 0x1B, 0x69, 0x07, 0x00, 0x0A]), [.line("hi")])
        XCTAssertEqual(lines([0x6F, 0xFF, 0xC3, 0x6B, 0x0A]), [.line("o\u{FFFD}\u{FFFD}k")])
        XCTAssertEqual(lines(Array("tab\there\n".utf8)), [.line("tab\there")])
    }

    func testRandomGarbageNeverCrashesAndStaysBounded() {
        var generator = SystemRandomNumberGenerator()
        var assembler = LineAssembler(maxLineBytes: 32)
        for _ in 0..<2000 {
            let chunk = (0..<Int.random(in: 0...200, using: &generator)).map { _ in UInt8.random(in: 0...255, using: &generator) }
            for event in assembler.feed(chunk) {
                if case .line(let text) = event {
                    // Each kept byte decodes to at most one U+FFFD (3 bytes).
                    XCTAssertLessThanOrEqual(text.utf8.count, 32 * 3)
                }
            }
            XCTAssertLessThanOrEqual(assembler.pendingByteCount, 32)
        }
        XCTAssertEqual(assembler.feed(Array("\nversion\n".utf8)).last, .line("version"))
    }

    func testBackspaceAndDeleteEraseWholeCharacters() {
        XCTAssertEqual(lines(Array("hx\u{7F}i\n".utf8)), [.line("hi")])
        XCTAssertEqual(lines(Array("caf".utf8) + [0xC3, 0xA9, 0x08, 0x65, 0x0A]), [.line("cafe")])
        XCTAssertEqual(lines([0x08, 0x08, 0x6F, 0x6B, 0x0A]), [.line("ok")], "erasing an empty line does nothing")
    }

    func testStepsReportWhatEachByteDid() {
        var assembler = LineAssembler(maxLineBytes: 2)
        XCTAssertEqual(assembler.feed(UInt8(ascii: "a")), .appended(0x61))
        XCTAssertEqual(assembler.feed(UInt8(0x7F)), .erased)
        XCTAssertEqual(assembler.feed(UInt8(0x7F)), .ignored)
        XCTAssertEqual(assembler.feed(UInt8(0)), .ignored)
        _ = assembler.feed(UInt8(ascii: "a"))
        _ = assembler.feed(UInt8(ascii: "b"))
        XCTAssertEqual(assembler.feed(UInt8(ascii: "c")), .tooLong)
        XCTAssertEqual(assembler.feed(UInt8(ascii: "d")), .ignored)
        XCTAssertEqual(assembler.feed(UInt8(0x0D)), .ignored, "the end of a discarded line is not a line")
        XCTAssertEqual(assembler.feed(UInt8(0x0A)), .ignored)
        XCTAssertEqual(assembler.feed(UInt8(0x0A)), .line(""))
    }
}

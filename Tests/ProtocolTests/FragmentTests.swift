// Message fragmentation over an ATT MTU (docs/protocol.md section 16, Bluetooth LE transport):
// byte vectors for the format and every reassembly error path.
import XCTest
@testable import Protocol

final class FragmentTests: XCTestCase {
    private func hex(_ text: String) -> Bytes { Bytes(hex: String(text.filter { $0 != " " }))! }
    /// 0x00, 0x01, ... wrapping: position is visible in every fragment.
    private func counting(_ count: Int) -> Bytes { (0..<count).map { UInt8($0 & 0xFF) } }

    // MARK: Fragmenter

    func testSingleFragmentMessageIsStartEndWithLength() throws {
        // The Fault unknownKey (section 8) as the doc's worked example.
        let fragments = try MessageFragmenter.fragments(of: hex("7f010001"), maxFragment: 20)
        XCTAssertEqual(fragments, [hex("c0 0004 7f010001")])
    }

    func testMessageFillingExactlyOneFragmentStaysSingle() throws {
        let fragments = try MessageFragmenter.fragments(of: counting(17), maxFragment: 20)
        XCTAssertEqual(fragments.count, 1)
        XCTAssertEqual(fragments[0].count, 20)
        XCTAssertEqual(Array(fragments[0].prefix(4)), hex("c0 0011 00"))
        let two = try MessageFragmenter.fragments(of: counting(18), maxFragment: 20)
        XCTAssertEqual(two, [hex("80 0012") + counting(17), hex("41 11")])
    }

    func testMaxMessageAtMTU23Is54Fragments() throws {
        let message = counting(1024)
        let fragments = try MessageFragmenter.fragments(of: message, maxFragment: 23 - 3)
        // 17 bytes in the START fragment, then 19 per fragment: 17 + 53 * 19 = 1024.
        XCTAssertEqual(fragments.count, 54)
        XCTAssertEqual(fragments[0], hex("80 0400") + counting(17))
        XCTAssertEqual(Array(fragments[1].prefix(3)), hex("01 1112"))
        XCTAssertEqual(fragments[1].count, 20)
        XCTAssertEqual(fragments[52][0], 0x34)
        XCTAssertEqual(fragments[53][0], 0x40 | 53, "END with sequence 53")
        XCTAssertEqual(fragments[53].count, 20)
        XCTAssertTrue(fragments.allSatisfy { $0.count <= 20 })
        XCTAssertEqual(Array(fragments.map { $0.dropFirst($0[0] & 0x80 != 0 ? 3 : 1) }.joined()), message)
    }

    func testMaxMessageAtMTU247IsFiveFragments() throws {
        let fragments = try MessageFragmenter.fragments(of: counting(1024), maxFragment: 247 - 3)
        // 241 + 243 + 243 + 243 + 54.
        XCTAssertEqual(fragments.map(\.count), [244, 244, 244, 244, 55])
        XCTAssertEqual(fragments.map { $0[0] }, [0x80, 0x01, 0x02, 0x03, 0x44])
        XCTAssertEqual(Array(fragments[0].prefix(5)), hex("80 0400 0001"))
        XCTAssertEqual(Array(fragments[1].prefix(3)), hex("01 f1f2"), "continues at byte 241")
    }

    func testDocExample300BytesAtMTU185() throws {
        let fragments = try MessageFragmenter.fragments(of: counting(300), maxFragment: 185 - 3)
        XCTAssertEqual(fragments.map(\.count), [182, 122])
        XCTAssertEqual(Array(fragments[0].prefix(4)), hex("80 012c 00"))
        XCTAssertEqual(Array(fragments[1].prefix(2)), hex("41 b3"), "179 bytes went first")
    }

    func testFragmenterRejectsEmptyOversizedAndTinyFragments() {
        XCTAssertThrowsError(try MessageFragmenter.fragments(of: [], maxFragment: 20)) {
            XCTAssertEqual($0 as? FragmentError, .emptyMessage)
        }
        XCTAssertThrowsError(try MessageFragmenter.fragments(of: counting(1025), maxFragment: 20)) {
            XCTAssertEqual($0 as? FragmentError, .oversizedMessage(length: 1025, limit: 1024))
        }
        XCTAssertThrowsError(try MessageFragmenter.fragments(of: [1], maxFragment: 19)) {
            XCTAssertEqual($0 as? FragmentError, .fragmentSizeTooSmall(19))
        }
    }

    // MARK: Reassembler

    func testRoundTripAtSeveralSizes() throws {
        for maxFragment in [20, 21, 50, 182, 244, 514, 2000] {
            for length in [1, 2, 17, 18, 19, 36, 37, 300, 1023, 1024] {
                let message = counting(length)
                var reassembler = MessageReassembler()
                let fragments = try MessageFragmenter.fragments(of: message, maxFragment: maxFragment)
                for fragment in fragments.dropLast() {
                    XCTAssertNil(try reassembler.append(fragment))
                }
                XCTAssertEqual(try reassembler.append(fragments.last!), message, "\(length) at \(maxFragment)")
                XCTAssertFalse(reassembler.isInProgress)
            }
        }
    }

    func testSingleFragmentVector() throws {
        var reassembler = MessageReassembler()
        XCTAssertEqual(try reassembler.append(hex("c0 0004 7f010001")), hex("7f010001"))
    }

    func testTwoMessagesBackToBack() throws {
        var reassembler = MessageReassembler()
        XCTAssertNil(try reassembler.append(hex("80 0003 aa")))
        XCTAssertEqual(reassembler.bufferedByteCount, 1)
        XCTAssertEqual(try reassembler.append(hex("41 bbcc")), hex("aabbcc"))
        XCTAssertEqual(try reassembler.append(hex("c0 0001 dd")), hex("dd"), "sequence restarts at 0")
    }

    private func assertError(_ fragments: [String], _ expected: FragmentError,
                             file: StaticString = #filePath, line: UInt = #line) {
        var reassembler = MessageReassembler()
        for text in fragments.dropLast() {
            XCTAssertNoThrow(try reassembler.append(hex(text)), file: file, line: line)
        }
        let before = reassembler.bufferedByteCount
        let wasInProgress = reassembler.isInProgress
        XCTAssertThrowsError(try reassembler.append(hex(fragments.last!)), file: file, line: line) {
            XCTAssertEqual($0 as? FragmentError, expected, file: file, line: line)
        }
        XCTAssertEqual(reassembler.bufferedByteCount, before, "a bad fragment changes nothing", file: file, line: line)
        XCTAssertEqual(reassembler.isInProgress, wasInProgress, file: file, line: line)
    }

    func testEmptyFragment() { assertError([""], .emptyFragment) }
    func testContinuationWithoutStart() { assertError(["41 aa"], .continuationWithoutStart(sequence: 1)) }
    func testContinuationSequenceZeroWithoutStart() { assertError(["00 aa"], .continuationWithoutStart(sequence: 0)) }
    func testStartWhileInProgress() { assertError(["80 0003 aa", "c0 0001 bb"], .startWhileInProgress) }
    func testStartWithNonZeroSequence() { assertError(["c5 0001 bb"], .sequenceGap(expected: 0, received: 5)) }
    func testSequenceGap() { assertError(["80 0004 aa", "02 bb"], .sequenceGap(expected: 1, received: 2)) }
    func testRepeatedSequence() { assertError(["80 0004 aa", "01 bb", "01 bb"], .sequenceGap(expected: 2, received: 1)) }
    func testTruncatedStart() { assertError(["80 04"], .truncatedStart(length: 2)) }
    func testTotalLengthZero() { assertError(["c0 0000 aa"], .invalidTotalLength(0)) }
    func testTotalLengthAboveLimit() { assertError(["80 0401 aa"], .invalidTotalLength(1025)) }
    func testTotalLengthMaximumIsAccepted() throws {
        var reassembler = MessageReassembler()
        XCTAssertNil(try reassembler.append(hex("80 0400 aa")))
    }
    func testStartWithoutPayload() { assertError(["80 0004"], .noPayload(sequence: 0)) }
    func testContinuationWithoutPayload() { assertError(["80 0004 aa", "01"], .noPayload(sequence: 1)) }
    func testOverrunInStart() { assertError(["c0 0001 aabb"], .overrun(announced: 1, received: 2)) }
    func testOverrunInContinuation() { assertError(["80 0002 aa", "41 bbcc"], .overrun(announced: 2, received: 3)) }
    func testEndBeforeCompleteInStart() { assertError(["c0 0002 aa"], .endBeforeComplete(announced: 2, received: 1)) }
    func testEndBeforeCompleteInContinuation() {
        assertError(["80 0004 aa", "41 bb"], .endBeforeComplete(announced: 4, received: 2))
    }
    func testMissingEndInStart() { assertError(["80 0001 aa"], .missingEnd) }
    func testMissingEndInContinuation() { assertError(["80 0002 aa", "01 bb"], .missingEnd) }

    func testResetDropsTheIncompleteMessage() throws {
        var reassembler = MessageReassembler()
        XCTAssertNil(try reassembler.append(hex("80 0004 aa")))
        reassembler.reset()
        XCTAssertFalse(reassembler.isInProgress)
        XCTAssertEqual(try reassembler.append(hex("c0 0001 bb")), hex("bb"))
    }

    func testSequenceWrapsModulo64() throws {
        // Only reachable with fragments of fewer than 17 bytes, which the fragmenter refuses;
        // the reassembler still counts 62, 63, 0, 1 rather than failing at 64.
        var reassembler = MessageReassembler()
        XCTAssertNil(try reassembler.append(hex("80 0046 00")))
        for sequence in 1...68 {
            XCTAssertNil(try reassembler.append([UInt8(sequence & 0x3F), 0x00]), "sequence \(sequence)")
        }
        XCTAssertEqual(try reassembler.append([UInt8(0x40 | (69 & 0x3F)), 0x01]), Bytes(repeating: 0, count: 69) + [1])
    }

    func testHeaderByte() {
        XCTAssertEqual(FragmentHeader(byte: 0xC0), FragmentHeader(isStart: true, isEnd: true, sequence: 0))
        XCTAssertEqual(FragmentHeader(byte: 0x7F), FragmentHeader(isStart: false, isEnd: true, sequence: 63))
        XCTAssertEqual(FragmentHeader(isStart: false, isEnd: false, sequence: 64).byte, 0x00)
    }
}

final class FragmentDocTests: XCTestCase {
    /// docs/protocol.md section 16 shows the single-fragment example and the 300-byte headers.
    func testDocumentedExamplesMatch() throws {
        let doc = try XCTUnwrap(readRepositoryFile("docs/protocol.md"), "docs/protocol.md missing")
        let fragments = try MessageFragmenter.fragments(of: [0x7f, 0x01, 0x00, 0x01], maxFragment: 20)
        let spaced = fragments[0].map { Bytes([$0]).hexString }.joined(separator: " ")
        XCTAssertEqual(spaced, "c0 00 04 7f 01 00 01")
        XCTAssertTrue(doc.contains("single fragment `\(spaced)`"))
        let long = try MessageFragmenter.fragments(of: Bytes(repeating: 0, count: 300), maxFragment: 182)
        XCTAssertEqual(long.map(\.count), [182, 122])
        XCTAssertTrue(doc.contains("`80 01 2c` + bytes 0 to 178, then `41` + bytes 179 to 299"))
        let small = try MessageFragmenter.fragments(of: Bytes(repeating: 0, count: 300), maxFragment: 20)
        XCTAssertEqual(small.count, 16)
        XCTAssertEqual(small.last?.first, 0x4f)
        XCTAssertEqual(small.last?.count, 18, "header + the last 17 bytes")
        XCTAssertTrue(doc.contains("and `4f` + the last 17 bytes"))
    }
}

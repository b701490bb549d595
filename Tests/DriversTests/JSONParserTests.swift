// The JSON parser that replaced FoundationEssentials' JSONDecoder: byte-level vectors for what
// it accepts, every typed error with the offset it reports, the limits at and past their edge,
// and the decode() wording the config and board readers show.
import XCTest
@testable import Drivers

final class JSONParserTests: XCTestCase {
    private func parse(_ text: String, limits: JSONLimits = .standard) throws(JSONParseError) -> JSONTree {
        try JSONTree.parse(Array(text.utf8), limits: limits)
    }

    private func expect(_ bytes: [UInt8], _ kind: JSONParseError.Kind, at offset: Int, limits: JSONLimits = .standard,
                        file: StaticString = #filePath, line: UInt = #line) {
        do {
            let tree = try JSONTree.parse(bytes, limits: limits)
            XCTFail("accepted \(bytes): \(tree)", file: file, line: line)
        } catch {
            XCTAssertEqual(error, JSONParseError(kind, at: offset), "\(String(decoding: bytes, as: UTF8.self).debugDescription)",
                           file: file, line: line)
        }
    }

    private func expect(_ text: String, _ kind: JSONParseError.Kind, at offset: Int, limits: JSONLimits = .standard,
                        file: StaticString = #filePath, line: UInt = #line) {
        expect(Array(text.utf8), kind, at: offset, limits: limits, file: file, line: line)
    }

    // MARK: Accepted

    func testScalarsAndContainers() throws {
        XCTAssertEqual(try parse("null"), .null)
        XCTAssertEqual(try parse("true"), .bool(true))
        XCTAssertEqual(try parse(" \t\r\nfalse\n"), .bool(false))
        XCTAssertEqual(try parse(#""""#), .string(""))
        XCTAssertEqual(try parse("[]"), .array([]))
        XCTAssertEqual(try parse("{ }"), .object([:]))
        XCTAssertEqual(try parse(#"{"a": [1, {"b": null}], "c": "d"}"#),
                       .object(["a": .array([.integer(1), .object(["b": .null])]), "c": .string("d")]))
        XCTAssertEqual(try parse("[[[]]]"), .array([.array([.array([])])]))
    }

    func testNumbersKeepTheDecodersIntegerRule() throws {
        // Plain integers are exact over the whole Int64 range.
        XCTAssertEqual(try parse("0"), .integer(0))
        XCTAssertEqual(try parse("-0"), .integer(0))
        XCTAssertEqual(try parse("9223372036854775807"), .integer(.max))
        XCTAssertEqual(try parse("-9223372036854775808"), .integer(.min))
        XCTAssertEqual(try parse("9007199254740993"), .integer(9_007_199_254_740_993), "beyond 2^53: no Double on the way")
        // Past Int64: a Double, as JSONDecoder gave.
        XCTAssertEqual(try parse("9223372036854775808"), .number(9_223_372_036_854_775_808.0))
        XCTAssertEqual(try parse("-9223372036854775809"), .number(-9_223_372_036_854_775_809.0))
        XCTAssertEqual(try parse("123456789012345678901234567890"), .number(1.2345678901234568e29))
        // Whole numbers spelled with a fraction or exponent read as integers (the decoder did).
        XCTAssertEqual(try parse("1.0"), .integer(1))
        XCTAssertEqual(try parse("-1.0"), .integer(-1))
        XCTAssertEqual(try parse("1e2"), .integer(100))
        XCTAssertEqual(try parse("1E+2"), .integer(100))
        XCTAssertEqual(try parse("100e-2"), .integer(1))
        XCTAssertEqual(try parse("0.1e1"), .integer(1))
        XCTAssertEqual(try parse("-0.0"), .integer(0))
        XCTAssertEqual(try parse("1e-400"), .integer(0), "underflows to zero")
        // Fractions stay Doubles.
        XCTAssertEqual(try parse("1.5"), .number(1.5))
        XCTAssertEqual(try parse("-0.25e1"), .number(-2.5))
        XCTAssertEqual(try parse("1.7976931348623157e308"), .number(.greatestFiniteMagnitude))
        XCTAssertEqual(try parse("9223372036854775807.0"), .number(9_223_372_036_854_775_807.0), "2^63 as a Double is past Int64")
    }

    func testStringEscapesDecodeToExactBytes() throws {
        func bytes(_ text: String) throws -> [UInt8] {
            guard case .string(let value) = try parse(text) else { XCTFail(text); return [] }
            return Array(value.utf8)
        }
        XCTAssertEqual(try bytes(#""\"\\\/\b\f\n\r\t""#), [0x22, 0x5C, 0x2F, 0x08, 0x0C, 0x0A, 0x0D, 0x09])
        XCTAssertEqual(try bytes(#""\u0000\u001f\u007F""#), [0x00, 0x1F, 0x7F])
        XCTAssertEqual(try bytes(#""\u00e9\u00E9""#), [0xC3, 0xA9, 0xC3, 0xA9])
        XCTAssertEqual(try bytes(#""\u20AC""#), [0xE2, 0x82, 0xAC])
        XCTAssertEqual(try bytes(#""\uFFFF""#), [0xEF, 0xBF, 0xBF])
        XCTAssertEqual(try bytes(#""\uD83D\uDE00""#), [0xF0, 0x9F, 0x98, 0x80], "surrogate pair to U+1F600")
        XCTAssertEqual(try bytes(#""\uDBFF\uDFFF""#), [0xF4, 0x8F, 0xBF, 0xBF], "the last code point")
        XCTAssertEqual(try bytes(#""a\/b""#), Array("a/b".utf8))
    }

    func testRawUTF8IsKeptByteForByte() throws {
        let samples: [[UInt8]] = [[0xC2, 0x80], [0xDF, 0xBF], [0xE0, 0xA0, 0x80], [0xED, 0x9F, 0xBF], [0xEE, 0x80, 0x80],
                                  [0xF0, 0x90, 0x80, 0x80], [0xF4, 0x8F, 0xBF, 0xBF], [0x7F]]
        for sample in samples {
            let tree = try JSONTree.parse([0x22] + sample + [0x22])
            XCTAssertEqual(tree, .string(String(decoding: sample, as: UTF8.self)), "\(sample)")
            guard case .string(let text) = tree else { continue }
            XCTAssertEqual(Array(text.utf8), sample)
        }
    }

    func testByteOrderMarkIsSkippedOnlyAtTheStart() throws {
        XCTAssertEqual(try JSONTree.parse([0xEF, 0xBB, 0xBF] + Array("{}".utf8)), .object([:]))
        expect([0x20, 0xEF, 0xBB, 0xBF, 0x31], .unexpectedByte(0xEF), at: 1)
    }

    func testOtherMembersOfFixedShapeMessagesAreReadable() throws {
        let tree = try parse(#"{"id": "x", "extra": [1, 2], "n": null}"#)
        guard case .object(let fields) = tree else { return XCTFail("\(tree)") }
        XCTAssertEqual(fields["id"]?.stringValue, "x")
        XCTAssertNil(fields["n"]?.stringValue)
        XCTAssertNil(fields["missing"])
    }

    // MARK: Refused, one case per kind with its offset

    func testEachErrorKindWithItsOffset() {
        expect("", .empty, at: 0)
        expect(" \n\t ", .empty, at: 4)
        expect([0xEF, 0xBB, 0xBF], .empty, at: 3)
        expect("[1, 2", .unexpectedEnd, at: 5)
        expect("{\"a\"", .unexpectedEnd, at: 4)
        expect("{\"a\":", .unexpectedEnd, at: 5)
        expect("\"abc", .unexpectedEnd, at: 4)
        expect("\"ab\\", .unexpectedEnd, at: 4)
        expect("[1 2]", .unexpectedByte(UInt8(ascii: "2")), at: 3)
        expect("{\"a\" 1}", .unexpectedByte(UInt8(ascii: "1")), at: 5)
        expect("{1: 2}", .unexpectedByte(UInt8(ascii: "1")), at: 1)
        expect("{'a': 1}", .unexpectedByte(UInt8(ascii: "'")), at: 1)
        expect("/* c */ 1", .unexpectedByte(UInt8(ascii: "/")), at: 0)
        expect("NaN", .unexpectedByte(UInt8(ascii: "N")), at: 0)
        expect("+1", .unexpectedByte(UInt8(ascii: "+")), at: 0)
        expect(".5", .unexpectedByte(UInt8(ascii: ".")), at: 0)
        expect("1 2", .trailingData, at: 2)
        expect("{} x", .trailingData, at: 3)
        expect("tru", .invalidLiteral, at: 0)
        expect("[nul]", .invalidLiteral, at: 1)
        expect("truex", .invalidLiteral, at: 0)
        expect("falsе", .invalidLiteral, at: 0)  // a Cyrillic е
        expect("01", .invalidNumber, at: 0)
        expect("-", .invalidNumber, at: 0)
        expect("-a", .invalidNumber, at: 0)
        expect("1.", .invalidNumber, at: 0)
        expect("[1.e2]", .invalidNumber, at: 1)
        expect("1e", .invalidNumber, at: 0)
        expect("1e+", .invalidNumber, at: 0)
        expect("0x10", .invalidNumber, at: 0)
        expect("1.2.3", .invalidNumber, at: 0)
        expect("1e400", .numberOutOfRange, at: 0)
        expect("[-1.7976931348623157e309]", .numberOutOfRange, at: 1)
        expect([0x22, 0x61, 0x09, 0x22], .controlCharacterInString, at: 2)
        expect([0x22, 0x0A, 0x22], .controlCharacterInString, at: 1)
        expect([0x22, 0x00, 0x22], .controlCharacterInString, at: 1)
        expect(#""\x""#, .invalidEscape, at: 1)
        expect(#""ab\'""#, .invalidEscape, at: 3)
        expect(#""\u12""#, .invalidUnicodeEscape, at: 1)
        expect(#""\u12G4""#, .invalidUnicodeEscape, at: 1)
        expect(#""\uD800""#, .loneSurrogate, at: 1)
        expect(#""\uD800x""#, .loneSurrogate, at: 1)
        expect(#""\uD800\n""#, .loneSurrogate, at: 1)
        expect(#""\uD800\u0041""#, .loneSurrogate, at: 1)
        expect(#""\uD800\uD800""#, .loneSurrogate, at: 1)
        expect(#""a\uDC00""#, .loneSurrogate, at: 2)
        expect(#""\uDFFF\uD800""#, .loneSurrogate, at: 1)
        expect(#""\uD800\u12""#, .invalidUnicodeEscape, at: 7)
        expect(#"{"a": 1, "a": 2}"#, .duplicateKey, at: 9)
        expect(#"{"a": {"b": 1, "c": {"b": 2, "b": 3}}}"#, .duplicateKey, at: 29)
        expect("[1,]", .trailingComma, at: 3)
        expect("{\"a\": 1 , }", .trailingComma, at: 10)
        expect("[,1]", .unexpectedByte(UInt8(ascii: ",")), at: 1)
        expect("{,}", .unexpectedByte(UInt8(ascii: ",")), at: 1)
    }

    func testInvalidUTF8IsRefusedWhereItStarts() {
        let cases: [[UInt8]] = [
            [0x80],                    // a lone continuation byte
            [0xBF],
            [0xC0, 0x80],              // overlong NUL
            [0xC1, 0xBF],              // overlong
            [0xC2],                    // truncated
            [0xC2, 0x41],              // bad continuation
            [0xE0, 0x80, 0x80],        // overlong 3-byte
            [0xE0, 0x9F, 0xBF],
            [0xED, 0xA0, 0x80],        // an encoded surrogate (U+D800)
            [0xED, 0xBF, 0xBF],
            [0xE1, 0x80],              // truncated 3-byte
            [0xF0, 0x80, 0x80, 0x80],  // overlong 4-byte
            [0xF0, 0x8F, 0xBF, 0xBF],
            [0xF4, 0x90, 0x80, 0x80],  // above U+10FFFF
            [0xF5, 0x80, 0x80, 0x80],
            [0xFF],
            [0xF0, 0x9F, 0x98],        // truncated 4-byte
            [0xF0, 0x9F, 0x41, 0x80],
        ]
        for sample in cases {
            expect([0x22, 0x61] + sample + [0x22], .invalidUTF8, at: 2)
        }
        // Outside strings a non-ASCII byte is simply unexpected.
        expect([0xC3, 0xA9], .unexpectedByte(0xC3), at: 0)
    }

    // MARK: Limits

    func testDepthLimitAtAndPastTheEdge() throws {
        let limits = JSONLimits(maxInputBytes: 1 << 20, maxDepth: 8, maxStringBytes: 64, maxMembers: 16)
        XCTAssertNoThrow(try parse(String(repeating: "[", count: 8) + String(repeating: "]", count: 8), limits: limits))
        expect(String(repeating: "[", count: 9) + String(repeating: "]", count: 9), .tooDeep, at: 8, limits: limits)
        expect(String(repeating: "{\"a\":", count: 9) + "1" + String(repeating: "}", count: 9), .tooDeep, at: 40, limits: limits)
        // The standard depth holds deep hostile input without exhausting the stack.
        expect(String(repeating: "[", count: 100_000), .tooDeep, at: JSONLimits.standard.maxDepth)
        // Closing containers gives the depth back: siblings do not add up.
        XCTAssertNoThrow(try parse("[" + Array(repeating: "[[[[[[]]]]]]", count: 10).joined(separator: ",") + "]",
                                   limits: JSONLimits(maxInputBytes: 1 << 20, maxDepth: 8, maxStringBytes: 64, maxMembers: 16)))
    }

    func testInputSizeLimit() throws {
        let limits = JSONLimits(maxInputBytes: 10, maxDepth: 8, maxStringBytes: 64, maxMembers: 16)
        XCTAssertEqual(try parse("[1,2,3,4] ", limits: limits), .array([1, 2, 3, 4].map { .integer($0) }))
        expect("[1,2,3,4]  ", .tooLarge, at: 10, limits: limits)
    }

    func testStringLengthLimitCountsDecodedBytes() throws {
        let limits = JSONLimits(maxInputBytes: 1 << 20, maxDepth: 8, maxStringBytes: 4, maxMembers: 16)
        XCTAssertEqual(try parse(#""abcd""#, limits: limits), .string("abcd"))
        XCTAssertEqual(try parse(#""\u00e9\u00e9""#, limits: limits), .string("éé"), "12 bytes of input, 4 decoded")
        expect(#""abcde""#, .stringTooLong, at: 6, limits: limits)
        expect(#""\u00e9\u00e9\u00e9""#, .stringTooLong, at: 19, limits: limits)
        expect(#"{"abcde": 1}"#, .stringTooLong, at: 7, limits: limits)
    }

    func testMemberLimitPerObjectAndArray() throws {
        let limits = JSONLimits(maxInputBytes: 1 << 20, maxDepth: 8, maxStringBytes: 64, maxMembers: 3)
        XCTAssertNoThrow(try parse("[1,2,3]", limits: limits))
        XCTAssertNoThrow(try parse(#"{"a":1,"b":2,"c":3}"#, limits: limits))
        XCTAssertNoThrow(try parse("[[1,2,3],[1,2,3],[1,2,3]]", limits: limits), "the limit is per container")
        expect("[1,2,3,4]", .tooManyMembers, at: 7, limits: limits)
        expect(#"{"a":1,"b":2,"c":3,"d":4}"#, .tooManyMembers, at: 19, limits: limits)
    }

    // MARK: decode()

    func testDecodeFailureSaysWhatAndWhereButNeverQuotesTheDocument() {
        let secret = "PIN-493817"
        let document = "{\n  \"service\": {\"pin\": \"\(secret)\"},\n  \"baud\": 12x\n}"
        guard case .failure(let failure) = JSONTree.decode(Array(document.utf8)) else { return XCTFail("accepted") }
        XCTAssertEqual(failure.reason, "invalid number near line 3, column 11")
        XCTAssertFalse(failure.reason.contains(secret))
        guard case .failure(let duplicate) = JSONTree.decode(Array("{\"pin\": 1,\n\"pin\": 2}".utf8)) else { return XCTFail("accepted") }
        XCTAssertEqual(duplicate.reason, "duplicate key \"pin\" near line 2, column 1")
        guard case .failure(let binary) = JSONTree.decode([0x22, 0x01, 0x22]) else { return XCTFail("accepted") }
        XCTAssertEqual(binary.reason, "unescaped control character in a string near line 1, column 2")
        XCTAssertEqual(JSONTree.decode(Array("[true]".utf8)), .success(.array([.bool(true)])))
    }
}

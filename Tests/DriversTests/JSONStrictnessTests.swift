// What the parser refuses beyond the grammar, byte by byte (issue 14): duplicate keys named with
// their path, UTF-16/UTF-32 text named as such (a UTF-8 byte order mark stays accepted), numbers
// with a fraction refused by the integer readers instead of truncated; and Files.read refusing a
// FIFO without blocking and a file past its limit, naming the path.
import XCTest
@testable import Drivers
#if canImport(Glibc)
import Glibc
#endif

final class JSONStrictnessTests: XCTestCase {
    private func failure(_ bytes: [UInt8], file: StaticString = #filePath, line: UInt = #line) -> JSONParseError? {
        do {
            let tree = try JSONTree.parse(bytes)
            XCTFail("accepted: \(tree)", file: file, line: line)
            return nil
        } catch {
            return error
        }
    }

    // MARK: Duplicate keys

    func testDuplicateKeyNamesTheKeyAndItsPath() {
        let top = failure(Array(#"{"pin":"1","pin":"2"}"#.utf8))
        XCTAssertEqual(top?.kind, .duplicateKey)
        XCTAssertEqual(top?.offset, 11)
        XCTAssertEqual(top?.keyPath, "pin")
        let nested = failure(Array(#"{"console":{"baud":9600,"tty":"pty","baud":115200}}"#.utf8))
        XCTAssertEqual(nested?.keyPath, "console.baud")
        XCTAssertEqual(nested?.summary, #"duplicate key "console.baud""#)
        let inArray = failure(Array(#"{"a":[{"x":1},{"y":2,"y":3}]}"#.utf8))
        XCTAssertEqual(inArray?.keyPath, "a[1].y")
        // Same key in sibling objects is fine: each object has its own keys.
        XCTAssertNoThrow(try JSONTree.parse(Array(#"{"a":{"k":1},"b":{"k":2},"k":3}"#.utf8)))
        // Equal after unescaping is the same key: "\u0062aud" is "baud".
        XCTAssertEqual(failure(Array(#"{"baud":1,"\u0062aud":2}"#.utf8))?.keyPath, "baud")
    }

    func testDuplicateKeyWordingInDecode() {
        guard case .failure(let failure) = JSONTree.decode(Array("{\"outputs\": {\"lock\": 1,\n\"lock\": 2}}".utf8)) else {
            return XCTFail("accepted")
        }
        XCTAssertEqual(failure.reason, #"duplicate key "outputs.lock" near line 2, column 1"#)
    }

    func testHostileKeysAreShownTamed() {
        // A key from the network: control bytes and non-ASCII become '?', length is capped.
        let long = String(repeating: "k", count: 500)
        let bytes = Array("{\"\(long)\":1,\"\(long)\":2}".utf8)
        let path = failure(bytes)?.keyPath ?? ""
        XCTAssertLessThanOrEqual(path.count, 70)
        XCTAssertTrue(path.hasSuffix("..."))
        let odd = failure(Array(#"{"a\u0007é":1,"a\u0007é":2}"#.utf8))
        XCTAssertEqual(odd?.keyPath, "a??")
    }

    // MARK: Encodings

    func testUTF16AndUTF32AreNamed() {
        let text = #"{"vehicleID": "X"}"#
        let le = Array(text.utf16).flatMap { [UInt8($0 & 0xFF), UInt8($0 >> 8)] }
        let be = Array(text.utf16).flatMap { [UInt8($0 >> 8), UInt8($0 & 0xFF)] }
        let utf32le = Array(text.unicodeScalars).flatMap { [UInt8($0.value & 0xFF), 0, 0, 0] }
        let utf32be = Array(text.unicodeScalars).flatMap { [0, 0, 0, UInt8($0.value & 0xFF)] }
        let cases: [([UInt8], String)] = [
            ([0xFF, 0xFE] + le, "UTF-16"), ([0xFE, 0xFF] + be, "UTF-16"),  // with a byte order mark
            (le, "UTF-16"), (be, "UTF-16"),                                  // without: NUL pattern
            ([0xFF, 0xFE, 0, 0] + utf32le, "UTF-32"), ([0, 0, 0xFE, 0xFF] + utf32be, "UTF-32"),
            (utf32le, "UTF-32"), (utf32be, "UTF-32"),
            ([0x31, 0x00], "UTF-16"),                                        // "1" in UTF-16LE
        ]
        for (bytes, encoding) in cases {
            let error = failure(bytes)
            XCTAssertEqual(error?.kind, .notUTF8(encoding: encoding), "\(bytes.prefix(6))")
            XCTAssertEqual(error?.summary, "file is \(encoding), expected UTF-8")
        }
        guard case .failure(let reason) = JSONTree.decode([0xFF, 0xFE] + le) else { return XCTFail("accepted") }
        XCTAssertEqual(reason.reason, "file is UTF-16, expected UTF-8", "no line and column for a whole-file problem")
    }

    func testUTF8ByteOrderMarkIsStillAcceptedAndNULInTextKeepsItsError() throws {
        XCTAssertEqual(try JSONTree.parse([0xEF, 0xBB, 0xBF] + Array(#"{"a":1}"#.utf8)), .object(["a": .integer(1)]))
        // A NUL inside UTF-8 text is not mistaken for UTF-16.
        XCTAssertEqual(failure([0x22, 0x00, 0x22])?.kind, .controlCharacterInString)
        XCTAssertEqual(failure([0x22, 0x00, 0x00, 0x22])?.kind, .controlCharacterInString)
        XCTAssertEqual(failure([0x31, 0x20, 0x00, 0x20, 0x20])?.kind, .trailingData)
    }

    // MARK: Integers

    func testFractionsStayNumbersAndWholeSpellingsAreIntegers() throws {
        XCTAssertEqual(try JSONTree.parse(Array("17.5".utf8)), .number(17.5))
        XCTAssertEqual(try JSONTree.parse(Array("1.75e1".utf8)), .number(17.5))
        XCTAssertEqual(try JSONTree.parse(Array("17.0".utf8)), .integer(17))
        XCTAssertEqual(try JSONTree.parse(Array("1.7e1".utf8)), .integer(17))
        XCTAssertEqual(JSONTree.number(17.5).notIntegerProblem, "must be an integer, got 17.5")
        XCTAssertNil(JSONTree.integer(17).notIntegerProblem)
        XCTAssertNil(JSONTree.string("17.5").notIntegerProblem, "strings are never echoed")
    }

    func testBoardIntegersRefuseFractions() {
        let board = #"""
        {"name": "t", "pulseWidthMillis": 250,
         "outputs": {"lock": {"chip": "c", "line": 17.5}, "unlock": {"chip": "c", "line": 2}, "trunkRelease": {"chip": "c", "line": 3}},
         "inputs": {"doorOpen": {"chip": "c", "line": 4}, "trunkOpen": {"chip": "c", "line": 5}, "pairingButton": {"chip": "c", "line": 6}}}
        """#
        XCTAssertThrowsError(try BoardDescription.parse(Array(board.utf8))) { error in
            XCTAssertEqual(error as? BoardDescriptionError, .notInteger(key: "outputs.lock.line", problem: "must be an integer, got 17.5"))
            XCTAssertEqual("\(error)", "outputs.lock.line: must be an integer, got 17.5")
        }
        let pulse = replace(replace(board, "17.5", "1"), "250", "250.25")
        XCTAssertThrowsError(try BoardDescription.parse(Array(pulse.utf8))) { error in
            XCTAssertEqual(error as? BoardDescriptionError, .notInteger(key: "pulseWidthMillis", problem: "must be an integer, got 250.25"))
        }
        let whole = replace(board, "17.5", "17.0")
        XCTAssertEqual(try BoardDescription.parse(Array(whole.utf8)).outputs[.lock]?.line, 17, "a whole number spelled 17.0 is 17")
    }

    private func replace(_ text: String, _ old: String, _ new: String) -> String {
        text.split(separator: old, omittingEmptySubsequences: false).joined(separator: new)
    }

    // MARK: Files.read

    private var folder = ""
    override func setUp() { folder = TestSupportFolder.make() }
    override func tearDown() { TestSupportFolder.remove(folder) }

    func testFilesReadRefusesAFIFOWithoutBlocking() {
        let fifo = folder + "/board.json"
        XCTAssertEqual(mkfifo(fifo, 0o600), 0)
        // Without O_NONBLOCK this open would wait forever for a writer.
        XCTAssertThrowsError(try Files.read(fifo)) { error in
            XCTAssertEqual(error as? FileReadError, .notRegularFile(path: fifo, kind: "a FIFO"))
            XCTAssertEqual("\(error)", "\(fifo) is a FIFO, not a regular file")
        }
        XCTAssertThrowsError(try Files.read(folder)) { error in
            XCTAssertEqual(error as? FileReadError, .notRegularFile(path: folder, kind: "a directory"))
        }
        XCTAssertThrowsError(try Files.read("/dev/null")) { error in
            XCTAssertEqual(error as? FileReadError, .notRegularFile(path: "/dev/null", kind: "a character device"))
        }
    }

    func testFilesReadBoundNamesPathAndLimit() throws {
        let path = folder + "/big.json"
        try Files.writeAtomically([UInt8](repeating: 0x20, count: (1 << 20) + 1), to: path)
        XCTAssertThrowsError(try Files.read(path)) { error in
            XCTAssertEqual(error as? FileReadError, .tooLarge(path: path, limit: 1 << 20))
            XCTAssertEqual("\(error)", "\(path) is larger than the limit of 1048576 bytes")
        }
        XCTAssertEqual(try Files.read(path, limit: 2 << 20).count, (1 << 20) + 1)
        XCTAssertThrowsError(try Files.read(folder + "/missing")) { error in
            XCTAssertEqual((error as? Errno)?.rawValue, ENOENT, "syscall failures stay Errno")
        }
    }
}

/// A temporary folder for this file's tests.
private enum TestSupportFolder {
    static func make() -> String {
        var template = Array("/tmp/opencarkey-strict-XXXXXX".utf8CString)
        guard let made = mkdtemp(&template) else { fatalError("mkdtemp") }
        return String(cString: made)
    }

    static func remove(_ path: String) {
        if let dir = opendir(path) {
            while let entry = readdir(dir) {
                let name = DirectoryEntry.name(entry)
                if name != "." && name != ".." { unlink(path + "/" + name) }
            }
            closedir(dir)
        }
        rmdir(path)
    }
}

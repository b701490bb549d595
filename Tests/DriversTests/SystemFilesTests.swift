// Files: atomic, permission-correct writes and bounded reads.
import XCTest
@testable import Drivers
#if canImport(Glibc)
import Glibc
#endif

final class SystemFilesTests: XCTestCase {
    private var folder = ""

    override func setUp() {
        var template = Array("/tmp/opencarkey-files-XXXXXX".utf8CString)
        folder = String(cString: mkdtemp(&template)!)
    }

    override func tearDown() {
        for name in ["a", "b", "big"] { unlink(folder + "/" + name) }
        rmdir(folder + "/sub/deeper")
        rmdir(folder + "/sub")
        rmdir(folder)
    }

    func testAtomicWriteSetsModeExactlyAndReplaces() throws {
        let path = folder + "/a"
        let old = umask(0)
        defer { umask(old) }
        try Files.writeAtomically([1, 2, 3], to: path, mode: 0o600)
        XCTAssertEqual(try Files.read(path), [1, 2, 3])
        XCTAssertEqual(try Files.mode(of: path), 0o600, "mode is exact whatever the umask")
        try Files.writeAtomically([4], to: path, mode: 0o640)
        XCTAssertEqual(try Files.read(path), [4])
        XCTAssertEqual(try Files.mode(of: path), 0o640)
    }

    func testExclusiveWriteRefusesAnExistingFileAndLeavesIt() throws {
        let path = folder + "/b"
        try Files.writeAtomically([9], to: path, exclusive: true)
        XCTAssertThrowsError(try Files.writeAtomically([8], to: path, exclusive: true)) { error in
            XCTAssertEqual((error as? Errno)?.rawValue, EEXIST)
        }
        XCTAssertEqual(try Files.read(path), [9], "the existing file is untouched")
        // No temporary file is left behind.
        XCTAssertNotEqual(access(path + ".tmp-\(getpid())", F_OK), 0)
    }

    func testReadIsBounded() throws {
        let path = folder + "/big"
        try Files.writeAtomically([UInt8](repeating: 7, count: 5000), to: path)
        XCTAssertThrowsError(try Files.read(path, limit: 4096)) { error in
            XCTAssertEqual(error as? FileReadError, .tooLarge(path: path, limit: 4096))
        }
        XCTAssertEqual(try Files.read(path, limit: 5000).count, 5000)
    }

    func testReadOfMissingFileIsTypedErrno() {
        XCTAssertThrowsError(try Files.read(folder + "/missing")) { error in
            XCTAssertEqual((error as? Errno)?.rawValue, ENOENT)
            XCTAssertTrue("\(error)".contains("missing"))
        }
    }

    func testEnsureDirectoryCreatesParentsWithMode() throws {
        let path = folder + "/sub/deeper"
        try Files.ensureDirectory(path, mode: 0o700)
        XCTAssertEqual(try Files.mode(of: path), 0o700)
        chmod(path, 0o755)
        try Files.ensureDirectory(path, mode: 0o700)
        XCTAssertEqual(try Files.mode(of: path), 0o700, "an existing, too-open folder is narrowed")
    }
}

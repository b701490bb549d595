// An --out that names an existing file: kept as it was, exit 1, and the message names --force
// (keygen, share, revoke, config sign all write through the same rule).
import XCTest
import Drivers

final class OutputFileTests: XCTestCase {
    private var folder = ""

    override func setUp() { folder = Subprocess.makeTemporaryDirectory() }
    override func tearDown() { Subprocess.removeTree(folder) }

    private func assertRefusedKeepingTheFile(_ arguments: [String], out: String, file: StaticString = #filePath, line: UInt = #line) throws {
        let before = try Files.read(out)
        let result = try Subprocess.run("carkey", arguments)
        XCTAssertEqual(result.status, 1, result.stderr, file: file, line: line)
        XCTAssertTrue(result.stderr.contains("\(out) already exists") && result.stderr.contains("give --force to replace it"),
                      result.stderr, file: file, line: line)
        XCTAssertEqual(result.stdout, "", "nothing reported as written", file: file, line: line)
        XCTAssertEqual(try Files.read(out), before, "the file is left as it was", file: file, line: line)
        let forced = try Subprocess.run("carkey", arguments + ["--force"])
        XCTAssertEqual(forced.status, 0, forced.stderr, file: file, line: line)
        XCTAssertNotEqual(try Files.read(out), before, "--force replaces it", file: file, line: line)
    }

    func testAnExistingOutputFileNeedsForce() throws {
        let owner = folder + "/owner.pem"
        let made = try Subprocess.run("carkey", ["keygen", "--out", owner])
        XCTAssertEqual(made.status, 0, made.stderr)
        let holder = try Subprocess.run("carkey", ["keygen", "--out", folder + "/holder.pem"]).stdout.filter { !$0.isWhitespace }
        try assertRefusedKeepingTheFile(["keygen", "--out", owner], out: owner)

        let existing = folder + "/existing.bin"
        try Subprocess.write("not to be lost\n", to: existing)
        try assertRefusedKeepingTheFile(["share", "--owner", owner, "--holder", holder, "--vehicle", "OCK-SIM-0001",
                                         "--permissions", "unlock-only", "--not-after", "2099-01-01T00:00:00Z", "--out", existing], out: existing)
        try Subprocess.write("not to be lost\n", to: existing)
        try assertRefusedKeepingTheFile(["revoke", "--owner", owner, "--vehicle", "OCK-SIM-0001", "--serial", "0011223344556677",
                                         "--out", existing], out: existing)
        try Subprocess.write(#"{"logLevel": "debug"}"#, to: folder + "/desired.json")
        try Subprocess.write("not to be lost\n", to: existing)
        try assertRefusedKeepingTheFile(["config", "sign", "--key", owner, "--vehicle", "OCK-SIM-0001", "--version", "1",
                                         "--in", folder + "/desired.json", "--out", existing], out: existing)
    }
}

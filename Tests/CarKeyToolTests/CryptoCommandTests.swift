// `carkey keygen` and `carkey crypto verify` exercised through the real binary.
import XCTest
#if canImport(Glibc)
import Glibc
#endif

final class CryptoCommandTests: XCTestCase {
    // Wycheproof ecdsa_secp256r1_sha256 tc 1: empty message, valid DER signature.
    let publicKey = "0404aaec73635726f213fb8a9e64da3b8632e41495a944d0045b522eba7240fad587d9315798aaa3a5ba01775787ced05eaaf7b4e09fc81d6d1aa546e8365d525d"
    let der = "3045022100b292a619339f6e567a305c951c0dcbcc42d16e47f219f9e98e76e09d8770b34a02200177e60492c5a8242f76f07bfe3661bde59ec2a17ce5bd2dab2abebdf89a62e2"
    let raw = "b292a619339f6e567a305c951c0dcbcc42d16e47f219f9e98e76e09d8770b34a0177e60492c5a8242f76f07bfe3661bde59ec2a17ce5bd2dab2abebdf89a62e2"

    func testValidInBothEncodings() throws {
        for (signature, encoding) in [(der, "der"), (raw, "raw"), (der, "auto"), (raw, "auto")] {
            let result = try Subprocess.run("carkey", ["crypto", "verify", "--public-key", publicKey, "--message", "",
                                                       "--signature", signature, "--encoding", encoding])
            XCTAssertEqual(result.status, 0, encoding)
            XCTAssertEqual(result.stdout, "valid\n")
        }
    }

    func testInvalidSignatureExitsOne() throws {
        let result = try Subprocess.run("carkey", ["crypto", "verify", "--public-key", publicKey, "--message", "00", "--signature", der])
        XCTAssertEqual(result.status, 1)
        XCTAssertTrue(result.stdout.hasPrefix("invalid: "), result.stdout)
        let garbage = try Subprocess.run("carkey", ["crypto", "verify", "--public-key", publicKey, "--message", "", "--signature", der + "00", "--encoding", "der"])
        XCTAssertEqual(garbage.status, 1, "trailing garbage after DER is invalid, not valid")
        XCTAssertTrue(garbage.stdout.hasPrefix("invalid: "))
    }

    func testUsageErrorsNameTheFieldAndExitTwo() throws {
        let cases: [([String], String)] = [
            (["--public-key", "xyz", "--message", "", "--signature", der], "--public-key"),
            (["--public-key", String(publicKey.prefix(64)), "--message", "", "--signature", der], "--public-key"),
            (["--public-key", publicKey, "--message", "0", "--signature", der], "--message"),
            (["--public-key", publicKey, "--message", "", "--signature", "zz"], "--signature"),
            (["--public-key", publicKey, "--message", "", "--signature", der, "--encoding", "raw"], "--signature"),
            (["--public-key", publicKey, "--message", "", "--signature", der, "--encoding", "pem"], "--encoding"),
            (["--message", "", "--signature", der], "--public-key"),
        ]
        for (arguments, field) in cases {
            let result = try Subprocess.run("carkey", ["crypto", "verify"] + arguments)
            XCTAssertEqual(result.status, 2, "\(arguments)")
            XCTAssertEqual(result.stderr.filter { $0 == "\n" }.count, 1, "one line: \(result.stderr)")
            XCTAssertTrue(result.stderr.contains(field), "\(result.stderr) should name \(field)")
            XCTAssertEqual(result.stdout, "")
        }
    }

    func testBatchAnswersEveryLineAndKeepsGoing() throws {
        let input = [
            #"{"publicKey":"\#(publicKey)","message":"","signature":"\#(der)","encoding":"der"}"#,
            #"{"publicKey":"\#(publicKey)","message":"","signature":"\#(raw)","encoding":"raw"}"#,
            #"{"publicKey":"\#(publicKey)","message":"01","signature":"\#(der)","encoding":"der"}"#,
            "this is not json",
            #"{"publicKey":"00","message":"","signature":"00"}"#,
            #"{"publicKey":"\#(publicKey)","message":"","signature":"\#(der)","encoding":"sec1"}"#,
            String(repeating: "x", count: 70_000),
            #"{"publicKey":"\#(publicKey)","message":"","signature":"\#(der)"}"#,
        ].joined(separator: "\n") + "\n"
        let result = try Subprocess.run("carkey", ["crypto", "verify", "--batch"], stdin: input)
        let lines = result.stdout.split(separator: "\n", omittingEmptySubsequences: false).dropLast()
        XCTAssertEqual(lines.count, 8, result.stdout)
        XCTAssertEqual(lines[0], "valid")
        XCTAssertEqual(lines[1], "valid")
        XCTAssertTrue(lines[2].hasPrefix("invalid: "))
        XCTAssertTrue(lines[3].hasPrefix("error: "))
        XCTAssertTrue(lines[4].hasPrefix("error: "))
        XCTAssertTrue(lines[5].hasPrefix("error: "))
        XCTAssertTrue(lines[6].hasPrefix("error: "), "overlong line")
        XCTAssertEqual(lines[7], "valid")
        XCTAssertEqual(result.status, 1, "not every line was valid")
    }

    func testKeygenWritesPrivatePEMWithMode0600AndRefusesOverwrite() throws {
        let folder = Subprocess.makeTemporaryDirectory()
        defer { Subprocess.removeTree(folder) }
        let path = folder + "/phone.pem"
        let result = try Subprocess.run("carkey", ["keygen", "--out", path])
        XCTAssertEqual(result.status, 0, result.stderr)
        let publicHex = result.stdout.split(separator: "\n").first.map(String.init) ?? ""
        XCTAssertEqual(publicHex.count, 130)
        XCTAssertTrue(publicHex.hasPrefix("04"))
        var info = stat()
        XCTAssertEqual(stat(path, &info), 0)
        XCTAssertEqual(info.st_mode & 0o777, 0o600)
        XCTAssertTrue(try Subprocess.read(path).hasPrefix("-----BEGIN PRIVATE KEY-----"))
        let again = try Subprocess.run("carkey", ["keygen", "--out", path])
        XCTAssertEqual(again.status, 1, "an existing key is never silently replaced")
        // The written key verifies as @PEMFILE: its public half matches what was printed.
        let check = try Subprocess.run("carkey", ["crypto", "verify", "--public-key", "@" + path, "--message", "", "--signature", der])
        XCTAssertEqual(check.status, 1, "a fresh key does not verify someone else's signature")
        XCTAssertTrue(check.stdout.hasPrefix("invalid: "))
    }

    func testHelpAndVersion() throws {
        let version = try Subprocess.run("carkey", ["--version"])
        XCTAssertEqual(version.status, 0)
        XCTAssertTrue(version.stdout.hasPrefix("carkey "))
        let help = try Subprocess.run("carkey", ["--help"])
        XCTAssertEqual(help.status, 0)
        XCTAssertTrue(help.stdout.contains("keygen"))
        XCTAssertTrue(help.stdout.contains("crypto"))
        let unknown = try Subprocess.run("carkey", ["--bogus"])
        XCTAssertEqual(unknown.status, 2)
        XCTAssertEqual(unknown.stderr.filter { $0 == "\n" }.count, 1)
    }
}

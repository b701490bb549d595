// `carkey config sign` as a back end runs it: the written document decodes, names the car, the
// version and the payload, verifies under the signing key, and the envelope is what the
// car's inbound gate accepts. Usage errors exit 2 and name the option.
import XCTest
import Drivers
import Protocol
import TestHarness

final class ConfigOTACommandTests: XCTestCase {
    var folder = ""
    var keyPath: String { folder + "/fleet.pem" }
    let key = try! P256PrivateKey.generate()

    override func setUpWithError() throws {
        folder = Subprocess.makeTemporaryDirectory()
        try Subprocess.write(try key.pemRepresentation(), to: keyPath)
        try Subprocess.write(#"{"logLevel": "debug", "proximity": {"walkAwaySeconds": 20}}"#, to: folder + "/config.json")
    }

    override func tearDown() { Subprocess.removeTree(folder) }

    func sign(_ extra: [String], out: String = "signed.bin") throws -> ProcessResult {
        try Subprocess.run("carkey", ["config", "sign", "--key", keyPath, "--vehicle", "VIN-OTA-1", "--in", folder + "/config.json",
                                      "--out", folder + "/" + out] + extra)
    }

    func testSignWritesAVerifiableDocument() throws {
        let result = try sign(["--version", "7", "--expires-in", "600", "--json"])
        XCTAssertEqual(result.status, 0, result.stderr)
        let bytes = try Files.read(folder + "/signed.bin")
        let document = try SignedConfig.decode(bytes)
        XCTAssertEqual(document.vehicleID.string, "VIN-OTA-1")
        XCTAssertEqual(document.version, 7)
        XCTAssertEqual(document.expiresAt - document.issuedAt, 600)
        XCTAssertEqual(document.payload, try Files.read(folder + "/config.json"))
        XCTAssertTrue(key.publicKey.isValidSignature(try ECDSASignature(rawRepresentation: document.signature), for: document.signatureInput))
        guard case .success(.object(let fields)) = JSONTree.decode(Array(result.stdout.utf8)) else { return XCTFail(result.stdout) }
        XCTAssertEqual(fields["version"], .integer(7))
        XCTAssertEqual(fields["document"], .string(bytes.hexString))
    }

    func testEnvelopeIsWhatTheCarAdmits() throws {
        let result = try sign(["--version", "1", "--envelope"])
        XCTAssertEqual(result.status, 0, result.stderr)
        guard case .success(.object(let fields)) = JSONTree.decode(Array(result.stdout.utf8)) else { return XCTFail(result.stdout) }
        XCTAssertEqual(fields["type"], .string("config"))
        guard case .string(let body)? = fields["body"] else { return XCTFail("no body") }
        XCTAssertEqual(Bytes(hex: body), try Files.read(folder + "/signed.bin"))
        XCTAssertLessThanOrEqual(result.stdout.utf8.count, 8 * 1024)
    }

    func testUsageErrorsExitTwoAndNameTheOption() throws {
        for (extra, option) in [(["--version", "0"], "--version"), (["--version", "x"], "--version"),
                                (["--version", "1", "--expires-in", "99999999"], "--expires-in")] {
            let result = try sign(extra)
            XCTAssertEqual(result.status, 2, "\(extra)")
            XCTAssertTrue(result.stderr.contains(option), result.stderr)
        }
        try Subprocess.write("[1, 2]", to: folder + "/config.json")
        let notObject = try sign(["--version", "1"], out: "other.bin")
        XCTAssertEqual(notObject.status, 2)
        XCTAssertTrue(notObject.stderr.contains("--in"), notObject.stderr)
    }
}

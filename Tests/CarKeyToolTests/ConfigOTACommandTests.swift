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

extension ConfigOTACommandTests {
    /// Without --out the document is only printed; the note names every managed setting the
    /// document leaves out, exactly as docs/cloud.md shows it for {"logLevel":"debug"}.
    func testEnvelopeWithoutOutAndTheNoteOfResetSettings() throws {
        try Subprocess.write(#"{"logLevel":"debug"}"#, to: folder + "/config.json")
        let result = try Subprocess.run("carkey", ["config", "sign", "--key", keyPath, "--vehicle", "VIN-OTA-1", "--version", "1",
                                                   "--in", folder + "/config.json", "--envelope"])
        XCTAssertEqual(result.status, 0, result.stderr)
        guard case .success(.object(let fields)) = JSONTree.decode(Array(result.stdout.utf8)) else { return XCTFail(result.stdout) }
        XCTAssertEqual(fields["type"], .string("config"))
        let note = try XCTUnwrap(result.stderr.split(separator: "\n").first { $0.hasPrefix("carkey: note: ") }, result.stderr)
        XCTAssertTrue(note.hasSuffix(": description, mqtt.keepaliveSeconds, mqtt.willDelaySeconds, proximity, audit, link.maxLinks, "
                                     + "link.idleTimeoutSeconds, link.identifierRotationMinutes, remote.allowUnlock, remote.autoRelockSeconds"), String(note))
        let cloud = try Subprocess.read(Subprocess.repositoryRoot + "/docs/cloud.md")
        XCTAssertTrue(cloud.contains("\n" + note + "\n"), "docs/cloud.md shows the note as printed: \(note)")
        XCTAssertEqual(try Subprocess.run("carkey", ["config", "sign", "--key", keyPath, "--vehicle", "VIN-OTA-1", "--version", "1",
                                                     "--in", folder + "/config.json", "--force"]).status, 2, "--force needs --out")
    }

    /// The fixture names logLevel and proximity (one of its members): neither is listed, and a
    /// document naming every managed entry gets no note.
    func testTheNoteLeavesOutWhatTheDocumentNames() throws {
        let partial = try sign(["--version", "2"], out: "partial.bin")
        XCTAssertFalse(partial.stderr.contains("logLevel") || partial.stderr.contains("proximity"), partial.stderr)
        XCTAssertTrue(partial.stderr.contains("remote.allowUnlock"), partial.stderr)
        try Subprocess.write(#"{"description":"d","logLevel":"info","mqtt":{"keepaliveSeconds":240,"willDelaySeconds":10},"proximity":{},"audit":{},"#
                             + #""link":{"maxLinks":4,"idleTimeoutSeconds":60,"identifierRotationMinutes":15},"remote":{"allowUnlock":true,"autoRelockSeconds":0}}"#,
                             to: folder + "/config.json")
        let full = try sign(["--version", "3"], out: "full.bin")
        XCTAssertEqual(full.status, 0, full.stderr)
        XCTAssertFalse(full.stderr.contains("note:"), full.stderr)
    }
}

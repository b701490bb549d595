// `carkey share` and `carkey revoke` through the real binary: the files they write decode,
// verify under the owner key and carry what was asked; usage errors name the field (exit 2).
import XCTest
import Drivers
import Protocol

final class KeysCommandTests: XCTestCase {
    var folder = ""
    var ownerFile = ""
    var ownerPublic = ""
    var holderPublic = ""

    override func setUpWithError() throws {
        folder = Subprocess.makeTemporaryDirectory()
        ownerFile = folder + "/owner.pem"
        let owner = try Subprocess.run("carkey", ["keygen", "--out", ownerFile])
        XCTAssertEqual(owner.status, 0, owner.stderr)
        ownerPublic = owner.stdout.filter { !$0.isWhitespace }
        let holder = try Subprocess.run("carkey", ["keygen", "--out", folder + "/holder.pem"])
        holderPublic = holder.stdout.filter { !$0.isWhitespace }
    }

    override func tearDown() { Subprocess.removeTree(folder) }

    func lines(_ output: String) -> [String: String] {
        var out: [String: String] = [:]
        for line in output.split(separator: "\n") {
            let parts = line.split(separator: " ", maxSplits: 1).map(String.init)
            if parts.count == 2 { out[parts[0]] = parts[1] }
        }
        return out
    }

    func shareArguments(_ overrides: [String: String?] = [:], out: String? = nil) -> [String] {
        var options: [(String, String?)] = [("owner", ownerFile), ("holder", holderPublic), ("vehicle", "OCK-TEST-VIN-00001"),
                                            ("permissions", "unlock-only"), ("not-after", "2099-12-31T23:59:59Z"),
                                            ("not-before", "2026-01-01T00:00:00+01:00"), ("out", out ?? folder + "/share.bin")]
        for (name, value) in overrides {
            if let index = options.firstIndex(where: { $0.0 == name }) { options[index].1 = value ?? nil } else { options.append((name, value ?? nil)) }
        }
        return ["share"] + options.flatMap { name, value in value.map { ["--" + name, $0] } ?? [] }
    }

    func testShareWritesAVerifiableCertificate() throws {
        let result = try Subprocess.run("carkey", shareArguments())
        XCTAssertEqual(result.status, 0, result.stderr)
        let printed = lines(result.stdout)
        let bytes = try Files.read(folder + "/share.bin")
        XCTAssertEqual(printed["certificate"], bytes.hexString)
        let certificate = try ShareCertificate.decode(bytes)
        XCTAssertEqual(printed["serial"], certificate.serial.description)
        XCTAssertEqual(printed["holder-key-id"], certificate.holderKeyID.description)
        XCTAssertEqual(certificate.holderPublicKey.sec1.hexString, holderPublic)
        let owner = try P256PublicKey(sec1: Bytes(hex: ownerPublic)!)
        XCTAssertEqual(certificate.issuerKeyID, KeyID(publicKey: owner))
        XCTAssertEqual(certificate.vehicleID.string, "OCK-TEST-VIN-00001")
        XCTAssertEqual(certificate.permissions, .unlock)
        XCTAssertEqual(certificate.notBefore, 1_767_222_000, "2026-01-01T00:00:00+01:00")
        XCTAssertEqual(certificate.notAfter, 4_102_444_799)
        XCTAssertTrue(owner.isValidSignature(try ECDSASignature(rawRepresentation: certificate.signature), for: certificate.signatureInput))

        // The car accepts it for the holder.
        let keychain = Keychain(records: [KeyRecord(publicKey: owner, role: .owner, permissions: .all)])
        let record = try ShareCertificateValidator.verify(bytes, keyID: certificate.holderKeyID, vehicleID: try VehicleID("OCK-TEST-VIN-00001"),
                                                          now: ProtocolTime(monotonicMillis: 0, wallSeconds: 1_800_000_000, wallClockTrusted: true),
                                                          keychain: keychain)
        XCTAssertEqual(record.role, .shared)

        let again = try Subprocess.run("carkey", shareArguments())
        XCTAssertEqual(again.status, 1, "refuses to overwrite")
        XCTAssertEqual(try Subprocess.run("carkey", shareArguments() + ["--force"]).status, 0)
    }

    func testEveryLevelAndNoNotBefore() throws {
        for (level, permissions) in [("full", Permissions.shareable), ("trunk-only", .trunk), ("lock-only", .lock)] {
            let path = folder + "/\(level).bin"
            let result = try Subprocess.run("carkey", shareArguments(["permissions": level, "not-before": nil], out: path))
            XCTAssertEqual(result.status, 0, result.stderr)
            let certificate = try ShareCertificate.decode(try Files.read(path))
            XCTAssertEqual(certificate.permissions, permissions, level)
            XCTAssertEqual(certificate.notBefore, 0)
        }
    }

    func testShareUsageErrorsNameTheField() throws {
        let cases: [([String: String?], String)] = [
            (["permissions": "owner"], "--permissions"),
            (["permissions": "manage"], "--permissions"),
            (["not-after": "2099-12-31"], "--not-after"),
            (["not-after": "2099-02-30T00:00:00Z"], "--not-after"),
            (["not-after": "2099-12-31T24:00:00Z"], "--not-after"),
            (["not-after": "2099-12-31T23:59:59+24:00"], "--not-after"),
            (["not-after": "2200-01-01T00:00:00Z"], "--not-after"),
            (["not-after": "2020-01-01T00:00:00Z", "not-before": nil], "--not-after"),
            (["not-before": "2100-01-01T00:00:00Z"], "--not-before"),
            (["not-before": "yesterday"], "--not-before"),
            (["holder": "04abcd"], "--holder"),
            (["holder": "zz"], "--holder"),
            (["holder": "04" + String(repeating: "00", count: 64)], "--holder"),
            (["holder": nil], "--holder"),
            (["vehicle": String(repeating: "V", count: 33)], "--vehicle"),
            (["vehicle": "VIN\u{7}"], "--vehicle"),
            (["owner": "/nonexistent/owner.pem"], "--key"),
            (["owner": nil], "--key"),
            (["out": nil], "--out"),
        ]
        for (overrides, field) in cases {
            let result = try Subprocess.run("carkey", shareArguments(overrides))
            XCTAssertEqual(result.status, 2, "\(overrides): \(result.stderr)")
            XCTAssertEqual(result.stderr.filter { $0 == "\n" }.count, 1, "one line: \(result.stderr)")
            XCTAssertTrue(result.stderr.contains(field), "\(result.stderr) should name \(field)")
            XCTAssertEqual(result.stdout, "")
        }
        XCTAssertFalse(FileManagerless.exists(folder + "/share.bin"), "nothing written")
        // A holder key file works too.
        let result = try Subprocess.run("carkey", shareArguments(["holder": "@" + folder + "/holder.pem"]))
        XCTAssertEqual(result.status, 0, result.stderr)
    }

    func revoke(_ target: [String], extra: [String] = []) throws -> ProcessResult {
        try Subprocess.run("carkey", ["revoke", "--owner", ownerFile, "--vehicle", "OCK-TEST-VIN-00001", "--out", folder + "/revoke.bin",
                                      "--force"] + target + extra)
    }

    func testRevokeBySerialKeyIDAndKey() throws {
        let owner = try P256PublicKey(sec1: Bytes(hex: ownerPublic)!)
        let holderKeyID = KeyID(publicKey: try P256PublicKey(sec1: Bytes(hex: holderPublic)!))
        let cases: [([String], RevocationTarget)] = [
            (["--serial", "0102030405060708"], .serial(try ShareSerial(bytes: Bytes(hex: "0102030405060708")!))),
            (["--key-id", holderKeyID.description], .key(holderKeyID)),
            (["--key", holderPublic], .key(holderKeyID)),
        ]
        for (arguments, target) in cases {
            let result = try revoke(arguments, extra: ["--issued-at", "2026-01-02T00:00:00Z"])
            XCTAssertEqual(result.status, 0, result.stderr)
            let bytes = try Files.read(folder + "/revoke.bin")
            XCTAssertEqual(lines(result.stdout)["revocation"], bytes.hexString)
            let revocation = try Revocation.decode(bytes)
            XCTAssertEqual(revocation.target, target)
            XCTAssertEqual(revocation.issuedAt, 1_767_312_000)
            XCTAssertEqual(revocation.issuerKeyID, KeyID(publicKey: owner))
            let keychain = Keychain(records: [KeyRecord(publicKey: owner, role: .owner, permissions: .all)])
            XCTAssertNoThrow(try RevocationValidator.verify(bytes, vehicleID: try VehicleID("OCK-TEST-VIN-00001"), keys: keychain))
        }
        XCTAssertTrue(try revoke(["--serial", "0102030405060708"]).stdout.hasPrefix("target serial 0102030405060708\n"))
    }

    func testRevokeUsageErrorsNameTheField() throws {
        let cases: [([String], String)] = [
            ([], "--serial"),
            (["--serial", "0102030405060708", "--key-id", "0102030405060708"], "--key-id"),
            (["--serial", "01020304"], "--serial"),
            (["--serial", "xyz"], "--serial"),
            (["--key-id", "010203040506070809"], "--key-id"),
            (["--key", "04abcd"], "--key"),
            (["--serial", "0102030405060708", "--issued-at", "2026-01-02 00:00:00"], "--issued-at"),
        ]
        for (arguments, field) in cases {
            let result = try revoke(arguments)
            XCTAssertEqual(result.status, 2, "\(arguments): \(result.stderr)")
            XCTAssertEqual(result.stderr.filter { $0 == "\n" }.count, 1, "one line: \(result.stderr)")
            XCTAssertTrue(result.stderr.contains(field), "\(result.stderr) should name \(field)")
        }
        let noVehicle = try Subprocess.run("carkey", ["revoke", "--owner", ownerFile, "--serial", "0102030405060708", "--out", folder + "/r"])
        XCTAssertEqual(noVehicle.status, 2)
        XCTAssertTrue(noVehicle.stderr.contains("--vehicle"))
    }
}

/// Existence check without Foundation.
enum FileManagerless {
    static func exists(_ path: String) -> Bool { (try? Files.read(path, limit: 1 << 16)) != nil }
}

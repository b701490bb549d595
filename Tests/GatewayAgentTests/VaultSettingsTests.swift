// The config's "vault" object (issue 18) and the PKCS#11 PIN file: defaults, paths relative to
// the config file, errors that name the key (never the value), and a PIN file refused unless
// it is a regular 0600/0400 file of this user.
#if canImport(Glibc)
import Glibc
#endif
import XCTest
import Drivers
import Protocol
import TestHarness
@testable import carkey_agent

final class VaultSettingsTests: XCTestCase {
    private var folder = ""

    override func setUp() { folder = TestFolders.make(prefix: "opencarkey-vaultcfg") }
    override func tearDown() { TestFolders.remove(folder) }

    private func parse(_ json: String) throws(ConfigError) -> AgentConfig {
        try AgentConfig.parse(Array(json.utf8), baseDirectory: "/etc/opencarkey")
    }

    func testAbsentMeansTheFileVault() throws {
        XCTAssertEqual(try parse("{}").vault, .file)
        XCTAssertEqual(try parse(#"{"vault":{"provider":"file"}}"#).vault, .file)
    }

    func testTPM2AndPKCS11Settings() throws {
        XCTAssertEqual(try parse(#"{"vault":{"provider":"tpm2"}}"#).vault, .tpm2(tcti: "device:/dev/tpmrm0", pcrs: []))
        XCTAssertEqual(try parse(#"{"vault":{"provider":"tpm2","tcti":"swtpm:host=127.0.0.1,port=2321","pcrs":[7,0]}}"#).vault,
                       .tpm2(tcti: "swtpm:host=127.0.0.1,port=2321", pcrs: [7, 0]))
        XCTAssertEqual(try parse(#"{"vault":{"provider":"pkcs11","module":"/usr/lib/p11.so","token":"car","pinFile":"pin"}}"#).vault,
                       .pkcs11(module: "/usr/lib/p11.so", token: "car", pinFile: "/etc/opencarkey/pin"), "relative to the config file")
        XCTAssertEqual(try parse(#"{"vault":{"provider":"pkcs11","module":"/p11.so","token":"car","pinFile":"/pin","bridge":"libexec/carkey-pkcs11-bridge"}}"#).vault,
                       .pkcs11(module: "/p11.so", token: "car", pinFile: "/pin", bridge: "/etc/opencarkey/libexec/carkey-pkcs11-bridge"),
                       "the bridge's path, relative to the config file")
    }

    /// tabrmd and mssim need what carkey-agent does not have (D-Bus and tpm2-tss, the Microsoft
    /// simulator's framing): refused when the config is read, naming what works instead.
    func testTransportsWithoutANativeClientAreRefusedNamingTheKernelResourceManager() {
        for tcti in ["tabrmd", "tabrmd:bus_type=system", "mssim:host=127.0.0.1,port=2321"] {
            do {
                _ = try parse(#"{"vault":{"provider":"tpm2","tcti":""# + tcti + #""}}"#)
                XCTFail("\(tcti) accepted")
            } catch {
                XCTAssertEqual(error.key, "vault.tcti")
                XCTAssertTrue(error.description.contains("device:/dev/tpmrm0"), error.description)
            }
        }
        XCTAssertEqual(try parse(#"{"vault":{"provider":"tpm2","tcti":"device:/dev/tpm0"}}"#).vault, .tpm2(tcti: "device:/dev/tpm0", pcrs: []))
        XCTAssertEqual(try parse(#"{"vault":{"provider":"tpm2","tcti":"swtpm:port=2321"}}"#).vault, .tpm2(tcti: "swtpm:port=2321", pcrs: []))
    }

    func testErrorsNameTheKeyAndNeverTheValue() {
        func error(_ json: String) -> ConfigError? {
            do { _ = try parse(json); return nil } catch { return error }
        }
        let cases: [(String, String)] = [
            (#"{"vault":{"provider":"hsm"}}"#, "vault.provider"),
            (#"{"vault":{"provider":"tpm2","tcti":"nonsense-secret"}}"#, "vault.tcti"),
            (#"{"vault":{"provider":"tpm2","pcrs":[24]}}"#, "vault.pcrs"),
            (#"{"vault":{"provider":"tpm2","pcrs":[1,1]}}"#, "vault.pcrs"),
            (#"{"vault":{"provider":"tpm2","pcrs":"7"}}"#, "vault.pcrs"),
            (#"{"vault":{"provider":"tpm2","module":"/x.so"}}"#, "vault.module"),
            (#"{"vault":{"provider":"pkcs11","token":"car","pinFile":"/p"}}"#, "vault.module"),
            (#"{"vault":{"provider":"pkcs11","module":"/x.so","pinFile":"/p"}}"#, "vault.token"),
            (#"{"vault":{"provider":"pkcs11","module":"/x.so","token":"car"}}"#, "vault.pinFile"),
            (#"{"vault":{"provider":"pkcs11","module":"/x.so","token":"car","pinFile":"/p","pin":"123456"}}"#, "vault.pin"),
            (#"{"vault":{"tcti":"device:/dev/tpmrm0"}}"#, "vault.tcti"),
            // Only the bridge: any other program would be started with the module path.
            (#"{"vault":{"provider":"pkcs11","module":"/x.so","token":"car","pinFile":"/p","bridge":"/bin/nonsense-secret"}}"#, "vault.bridge"),
            (#"{"vault":{"provider":"tpm2","bridge":"/usr/libexec/opencarkey/carkey-pkcs11-bridge"}}"#, "vault.bridge"),
            (#"{"vault":"tpm2"}"#, "vault"),
            (#"{"vault":{"provider":"tpm2","tcti":"swtpm:host=tpm.example,port=2321"}}"#, "vault.tcti"),
            (#"{"vault":{"provider":"tpm2","tcti":"device:tpmrm0"}}"#, "vault.tcti"),
        ]
        for (json, key) in cases {
            let found = error(json)
            XCTAssertEqual(found?.key, key, json)
            XCTAssertFalse(found?.description.contains("nonsense-secret") ?? false, "values are never echoed")
            XCTAssertFalse(found?.description.contains("123456") ?? false, "a PIN is never echoed")
        }
    }

    private func pinFile(_ text: String, mode: mode_t) throws -> String {
        let path = folder + "/pin-\(mode)"
        try Files.writeAtomically(Array(text.utf8), to: path, mode: 0o600)
        XCTAssertEqual(chmod(path, mode), 0)
        return path
    }

    func testPINFileIsReadOnlyFromAPrivateFile() throws {
        XCTAssertEqual(try VaultPINFile.read(try pinFile("123456\n", mode: 0o600)), Array("123456".utf8), "one newline dropped")
        XCTAssertEqual(try VaultPINFile.read(try pinFile("654321", mode: 0o400)), Array("654321".utf8))
        for mode: mode_t in [0o640, 0o644, 0o604, 0o700] {
            let path = try pinFile("123456", mode: mode)
            XCTAssertThrowsError(try VaultPINFile.read(path)) { error in
                let text = "\(error)"
                XCTAssertTrue(text.contains(path) && text.contains("chmod"), text)
                XCTAssertFalse(text.contains("123456"), "the PIN is never in an error")
            }
        }
        XCTAssertThrowsError(try VaultPINFile.read(folder + "/missing")) { XCTAssertTrue("\($0)".contains("cannot be read"), "\($0)") }
        XCTAssertThrowsError(try VaultPINFile.read(try pinFile("\n", mode: 0o600)), "an empty PIN")
        let link = folder + "/pin-link"
        XCTAssertEqual(symlink(try pinFile("123456", mode: 0o600), link), 0)
        XCTAssertThrowsError(try VaultPINFile.read(link), "a symlink is not followed")
        XCTAssertThrowsError(try VaultPINFile.read(folder), "a directory")
    }

    func testTheFileVaultStartLineNamesTheKeyFile() {
        XCTAssertEqual(AgentVault.startupLine(nil, stateDirectory: "/var/lib/opencarkey"),
                       "carkey-agent: key vault: file: storage key in /var/lib/opencarkey/storage.key, identity sealed in the store")
    }
}

// The blob files against tpm2-tools (tpm2-tss underneath), on the same swtpm: a sealed object
// that tpm2_createprimary/tpm2_create made under the vault's primary template loads and unseals
// in the vault, and the vault's own blobs load and unseal with tpm2_load/tpm2_unseal. Both
// directions need the same primary key (so the template is the one tss2 sent) and the same
// TPM2B_PUBLIC/TPM2B_PRIVATE file format (so cars set up by the tss2 build keep their keys).
#if canImport(Glibc)
import Glibc
#endif
@testable import Drivers
import Protocol
import TestHarness
import XCTest

final class TPM2BlobFilesTests: TPM2SwtpmTestCase {
    /// Runs a tpm2-tools command against `tpm`, then flushes the transient objects it leaves
    /// (swtpm has three slots and no resource manager: the next tool reloads from its context
    /// file); fails the test with its stderr when it fails.
    private func tool(_ name: String, _ arguments: [String], _ tpm: TPM2SoftwareTPM, line: UInt = #line) throws {
        try run(name, arguments, tpm, line: line)
        try run("tpm2_flushcontext", ["-t"], tpm, line: line)
    }

    private func run(_ name: String, _ arguments: [String], _ tpm: TPM2SoftwareTPM, line: UInt) throws {
        let path = "/usr/bin/" + name
        let process = try AgentProcess(path, ["-T", tpm.tcti] + arguments)
        XCTAssertTrue(process.wait(timeoutSeconds: 30) { !process.isRunning }, "\(name) hung", line: line)
        let status = process.stop()
        guard status == 0 else {
            XCTFail("\(name) \(arguments): \(status): \(process.stderr)", line: line)
            throw XCTSkip("\(name) failed")
        }
    }

    private func startWithTools() throws -> TPM2SoftwareTPM {
        try startTPM {
            guard access("/usr/bin/tpm2_createprimary", X_OK) == 0 else { throw HarnessUnavailable("tpm2-tools not installed (apt install tpm2-tools)") }
        }
    }

    /// The vault's primary template in tpm2-tools' words.
    private let primaryArguments = ["-C", "o", "-g", "sha256", "-G", "ecc256:aes128cfb",
                                    "-a", "fixedtpm|fixedparent|sensitivedataorigin|userwithauth|noda|restricted|decrypt"]

    func testAnObjectSealedByTpm2ToolsUnsealsInTheVault() throws {
        let tpm = try startWithTools()
        let work = folder()
        let state = folder()
        let secret = try SystemRandom().randomBytes(32)
        try Files.writeAtomically(secret, to: work + "/secret.bin")
        try tool("tpm2_createprimary", primaryArguments + ["-c", work + "/primary.ctx"], tpm)
        try tool("tpm2_create", ["-C", work + "/primary.ctx", "-g", "sha256", "-a", "fixedtpm|fixedparent|userwithauth|noda",
                                 "-i", work + "/secret.bin", "-u", state + "/tpm2-storage.pub", "-r", state + "/tpm2-storage.priv"], tpm)
        let vault = try TPM2KeyVault(tcti: tpm.tcti, stateDirectory: state)
        defer { vault.close() }
        XCTAssertEqual(try vault.storageKey(), secret, "tss2's blobs under tss2's primary unseal here: the same primary key")
    }

    func testTheVaultsBlobsLoadAndUnsealWithTpm2Tools() throws {
        let tpm = try startWithTools()
        let work = folder()
        let state = folder()
        let vault = try TPM2KeyVault(tcti: tpm.tcti, stateDirectory: state)
        let key = try vault.storageKey()
        let identity = try XCTUnwrap(try vault.deviceIdentity(create: true)).publicKey
        vault.close()
        try tool("tpm2_createprimary", primaryArguments + ["-c", work + "/primary.ctx"], tpm)
        try tool("tpm2_load", ["-C", work + "/primary.ctx", "-u", state + "/tpm2-storage.pub", "-r", state + "/tpm2-storage.priv",
                               "-c", work + "/storage.ctx"], tpm)
        try tool("tpm2_unseal", ["-c", work + "/storage.ctx", "-o", work + "/unsealed.bin"], tpm)
        XCTAssertEqual(try Files.read(work + "/unsealed.bin"), key)
        try tool("tpm2_load", ["-C", work + "/primary.ctx", "-u", state + "/tpm2-identity.pub", "-r", state + "/tpm2-identity.priv",
                               "-c", work + "/identity.ctx"], tpm)
        try tool("tpm2_readpublic", ["-c", work + "/identity.ctx", "-f", "der", "-o", work + "/identity.der"], tpm)
        // SubjectPublicKeyInfo for P-256 ends with the 65-byte uncompressed point.
        let der = try Files.read(work + "/identity.der")
        XCTAssertEqual(Bytes(der.suffix(65)), identity.sec1)
    }
}

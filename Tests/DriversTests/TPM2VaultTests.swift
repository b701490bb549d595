// The TPM 2.0 key vault against a real TPM simulator (swtpm): the identity and the storage key
// survive a restart, work only on the TPM that made them (a copied state directory is refused
// on another TPM), a PCR-bound key stops unsealing when the PCR changes, a vanished TPM and a
// tampered blob give typed errors.
#if canImport(Glibc)
import Glibc
#endif
@testable import Drivers
import Protocol
import Synchronization
import TestHarness
import XCTest

final class TPM2VaultTests: XCTestCase {
    private var folders: [String] = []
    private var tpms: [TPM2SoftwareTPM] = []
    private var vaults: [TPM2KeyVault] = []

    override func setUp() {
        // As the agent does (SignalPipe): a write to a TPM socket whose peer died is EPIPE, not death.
        signal(SIGPIPE, SIG_IGN)
    }

    override func tearDown() {
        vaults.forEach { $0.close() }
        vaults = []
        tpms.forEach { $0.kill() }
        tpms = []
        folders.forEach(TestFolders.remove)
        folders = []
    }

    private func folder(_ prefix: String) -> String {
        let made = TestFolders.make(prefix: prefix)
        folders.append(made)
        return made
    }

    private func startTPM(stateFolder: String? = nil) throws -> TPM2SoftwareTPM {
        let tpm = try requireDevice { try TPM2SoftwareTPM(stateFolder: stateFolder ?? folder("opencarkey-swtpm")) }
        tpms.append(tpm)
        return tpm
    }

    private func open(_ tpm: TPM2SoftwareTPM, _ state: String, pcrs: [Int] = []) throws -> TPM2KeyVault {
        let vault = try TPM2KeyVault(tcti: tpm.tcti, stateDirectory: state, pcrs: pcrs)
        vaults.append(vault)
        return vault
    }

    /// Runs `body`, which must throw a SecureKeyError that `matches` accepts.
    private func expectError(_ what: String, _ body: () throws -> Void, _ matches: (SecureKeyError) -> Bool,
                             file: StaticString = #filePath, line: UInt = #line) {
        do {
            try body()
            XCTFail("\(what): no error", file: file, line: line)
        } catch let error as SecureKeyError {
            XCTAssertTrue(matches(error), "\(what): unexpected \(error)", file: file, line: line)
        } catch {
            XCTFail("\(what): not a SecureKeyError: \(error)", file: file, line: line)
        }
    }

    private static func isForeign(_ error: SecureKeyError) -> Bool {
        if case .foreignObject = error { return true }
        return false
    }

    private static func mode(_ path: String) -> mode_t {
        var info = stat()
        return stat(path, &info) == 0 ? info.st_mode & 0o777 : 0
    }

    // MARK: identity

    func testIdentityIsCreatedOnceAndSurvivesATPMRestart() throws {
        let tpmState = folder("opencarkey-swtpm")
        let state = folder("opencarkey-tpm2-state")
        var tpm = try startTPM(stateFolder: tpmState)
        var vault = try open(tpm, state)
        XCTAssertEqual(vault.kind, "tpm2")
        XCTAssertNil(try vault.deviceIdentity(create: false), "no identity before one is asked for")
        let created = try XCTUnwrap(try vault.deviceIdentity(create: true))
        XCTAssertEqual(Self.mode(state + "/tpm2-identity.pub"), 0o600)
        XCTAssertEqual(Self.mode(state + "/tpm2-identity.priv"), 0o600)
        XCTAssertTrue(vault.summary.contains(tpm.tcti) && vault.summary.contains(state + "/tpm2-"), vault.summary)
        print("tpm2: summary: \(vault.summary)")

        // Restart the TPM (same seeds) and the vault: the same key comes back, not a new one.
        vault.close()
        tpm.kill()
        tpm = try startTPM(stateFolder: tpmState)
        vault = try open(tpm, state)
        let reloaded = try XCTUnwrap(try vault.deviceIdentity(create: false))
        XCTAssertEqual(reloaded.publicKey, created.publicKey)
        let again = try XCTUnwrap(try vault.deviceIdentity(create: true))
        XCTAssertEqual(again.publicKey, created.publicKey, "create: true must not replace an existing identity")
    }

    func testSignaturesVerifyAndECDHMatchesTheHost() throws {
        let tpm = try startTPM()
        let vault = try open(tpm, folder("opencarkey-tpm2-state"))
        let identity = try XCTUnwrap(try vault.deviceIdentity(create: true))
        let message = Bytes("challenge for the car".utf8)
        let signature = try identity.signature(for: message)
        XCTAssertEqual(signature.rawRepresentation.count, 64)
        XCTAssertTrue(identity.publicKey.isValidSignature(signature, for: message))
        XCTAssertFalse(identity.publicKey.isValidSignature(signature, for: message + [0]), "a signature must not verify for another message")
        let stranger = try P256PrivateKey.generate()
        XCTAssertFalse(stranger.publicKey.isValidSignature(signature, for: message), "nor under another key")

        let phone = try P256PrivateKey.generate()
        let inTPM = try identity.sharedSecret(with: phone.publicKey)
        XCTAssertEqual(inTPM.count, 32)
        XCTAssertEqual(inTPM, try phone.sharedSecret(with: identity.publicKey))
        XCTAssertNotEqual(inTPM, try identity.sharedSecret(with: stranger.publicKey))

        // Many signatures: r and s are sometimes shorter than 32 bytes (the padding path).
        var signMillis: [Double] = []
        var ecdhMillis: [Double] = []
        for round in 0..<50 {
            let text = Bytes("message \(round)".utf8)
            let start = Monotonic.seconds()
            let signed = try identity.signature(for: text)
            signMillis.append((Monotonic.seconds() - start) * 1000)
            XCTAssertTrue(identity.publicKey.isValidSignature(signed, for: text), "round \(round)")
            let ecdhStart = Monotonic.seconds()
            _ = try identity.sharedSecret(with: phone.publicKey)
            ecdhMillis.append((Monotonic.seconds() - ecdhStart) * 1000)
        }
        func figures(_ values: [Double]) -> String {
            let sorted = values.sorted()
            return "min \(String(format2: sorted[0])) ms, median \(String(format2: sorted[sorted.count / 2])) ms"
        }
        print("tpm2: swtpm over TCP, \(signMillis.count) runs: sign \(figures(signMillis)); ECDH_ZGen \(figures(ecdhMillis))")
    }

    func testIdentityIsUsableFromSeveralThreads() throws {
        let tpm = try startTPM()
        let vault = try open(tpm, folder("opencarkey-tpm2-state"))
        let identity = try XCTUnwrap(try vault.deviceIdentity(create: true))
        let failures = FailureCount()
        let threads = try (0..<4).map { index in
            try SystemThread.start(name: "tpm2-signer-\(index)") {
                for round in 0..<10 {
                    let text = Bytes("thread \(index) round \(round)".utf8)
                    guard let signed = try? identity.signature(for: text), identity.publicKey.isValidSignature(signed, for: text) else {
                        failures.count.add(1, ordering: .relaxed)
                        continue
                    }
                }
            }
        }
        threads.forEach { $0.join() }
        XCTAssertEqual(failures.count.load(ordering: .relaxed), 0)
    }

    // MARK: storage key

    func testStorageKeyIsTheSameAfterReopening() throws {
        let tpm = try startTPM()
        let state = folder("opencarkey-tpm2-state")
        var vault = try open(tpm, state)
        let key = try vault.storageKey()
        XCTAssertEqual(key.count, 32)
        XCTAssertNotEqual(key, Bytes(repeating: 0, count: 32))
        XCTAssertEqual(Self.mode(state + "/tpm2-storage.pub"), 0o600)
        XCTAssertEqual(Self.mode(state + "/tpm2-storage.priv"), 0o600)
        XCTAssertEqual(try vault.storageKey(), key)
        vault.close()
        vault = try open(tpm, state)
        XCTAssertEqual(try vault.storageKey(), key)
        // The blobs do not hold the key in the clear.
        for name in ["tpm2-storage.pub", "tpm2-storage.priv"] {
            let blob = try Files.read(state + "/" + name)
            XCTAssertFalse(blob.windows(32).contains { Array($0) == key }, "\(name) holds the plaintext key")
        }
    }

    // MARK: another TPM

    /// The "copied SD card" test: the state directory of one board, on another board's TPM.
    func testCopiedStateDirectoryIsRefusedOnAnotherTPM() throws {
        let state = folder("opencarkey-tpm2-state")
        let first = try startTPM()
        let home = try open(first, state)
        let identity = try XCTUnwrap(try home.deviceIdentity(create: true))
        _ = try home.storageKey()
        home.close()
        let blobsBefore = try ["tpm2-identity.pub", "tpm2-identity.priv", "tpm2-storage.pub", "tpm2-storage.priv"]
            .map { try Files.read(state + "/" + $0) }

        let second = try startTPM() // a fresh state folder: another TPM, other seeds
        let elsewhere = try open(second, state)
        expectError("identity on another TPM", { _ = try elsewhere.deviceIdentity(create: true) }) { error in
            guard case .foreignObject(let what, let fix) = error else { return false }
            return what.contains("tpm2-identity") && fix.contains("another board")
        }
        expectError("identity (create: false) on another TPM", { _ = try elsewhere.deviceIdentity(create: false) }, Self.isForeign)
        expectError("storage key on another TPM", { _ = try elsewhere.storageKey() }) { error in
            guard case .foreignObject(let what, _) = error else { return false }
            return what.contains("tpm2-storage")
        }
        // Nothing was replaced: the original board still has its keys.
        let blobsAfter = try ["tpm2-identity.pub", "tpm2-identity.priv", "tpm2-storage.pub", "tpm2-storage.priv"]
            .map { try Files.read(state + "/" + $0) }
        XCTAssertEqual(blobsAfter, blobsBefore)
        let back = try open(first, state)
        XCTAssertEqual(try back.deviceIdentity(create: false)?.publicKey, identity.publicKey)
    }

    // MARK: PCR binding

    func testPCRBoundStorageKeyStopsUnsealingWhenThePCRChanges() throws {
        let tpm = try startTPM()
        let state = folder("opencarkey-tpm2-state")
        var vault = try open(tpm, state, pcrs: [16])
        XCTAssertTrue(vault.summary.contains("PCRs 16"), vault.summary)
        let key = try vault.storageKey()
        vault.close()
        // (One vault at a time: swtpm serves one connection.)
        vault = try open(tpm, state, pcrs: [16])
        XCTAssertEqual(try vault.storageKey(), key, "unchanged PCRs: the key unseals")
        vault.close()

        // Configured without the binding: the password path is closed for a PCR-bound object.
        let unbound = try open(tpm, state)
        expectError("bound key opened without its policy", { _ = try unbound.storageKey() }, Self.isForeign)
        unbound.close()

        vault = try open(tpm, state, pcrs: [16])

        try vault.extendPCR(16, digest: SHA256.hash(Bytes("another boot loader".utf8)))
        expectError("bound key after the PCR changed", { _ = try vault.storageKey() }) { error in
            guard case .foreignObject(let what, let fix) = error else { return false }
            return what.contains("PCR") && fix.contains("PCR")
        }
        XCTAssertThrowsError(try TPM2KeyVault(tcti: tpm.tcti, stateDirectory: state, pcrs: [24]), "PCR 24 is not in the bank")
    }

    // MARK: power cuts and dictionary-attack lockout

    /// One unclean power cut after the car used its keys: the TPM is killed (no TPM2_Shutdown
    /// reaches it; the vault's close afterwards finds it gone) and started again on the same
    /// state. A vault is then opened as the next start of the car would.
    private func powerCut(_ tpm: TPM2SoftwareTPM, _ vault: TPM2KeyVault) throws {
        tpm.kill()
        vault.close()
        try tpm.powerCycle()
    }

    /// The car's objects carry noDA: ten cuts in a row, each after signing, ECDH and an unseal,
    /// and the storage key still unseals, the identity still signs, and the TPM's
    /// dictionary-attack counter stays 0 (swtpm locks out after 3 failures).
    func testTenUncleanPowerCutsLeaveTheLockoutCounterAtZero() throws {
        let tpm = try startTPM()
        let state = folder("opencarkey-tpm2-state")
        var vault = try open(tpm, state)
        let key = try vault.storageKey()
        let publicKey = try XCTUnwrap(try vault.deviceIdentity(create: true)).publicKey
        var counters: [UInt32] = []
        for cut in 1...10 {
            let identity = try XCTUnwrap(try vault.deviceIdentity(create: false))
            let signature = try identity.signature(for: [UInt8(cut)])
            XCTAssertTrue(publicKey.isValidSignature(signature, for: [UInt8(cut)]), "cut \(cut)")
            _ = try identity.sharedSecret(with: try P256PrivateKey.generate().publicKey)
            try powerCut(tpm, vault)
            vault = try open(tpm, state)
            XCTAssertEqual(try vault.storageKey(), key, "cut \(cut): the storage key unseals")
            counters.append(try vault.lockoutCounter())
        }
        XCTAssertEqual(counters, Array(repeating: 0, count: 10), "no cut counted as a failed authorisation")
        XCTAssertFalse(vault.summary.contains("noDA"), "no warning for objects made with noDA: \(vault.summary)")
        print("tpm2: DA lockout counter after each of 10 unclean power cuts (noDA objects): \(counters)")
    }

    /// What cars set up before noDA meet: objects without it count each unclean cut, the third
    /// locks the TPM, and the error names the fix, which works.
    func testDAProtectedObjectsOfOlderCarsLockOutAndTheErrorNamesTheFix() throws {
        let tpm = try startTPM()
        let state = folder("opencarkey-tpm2-state")
        func openOld() throws -> TPM2KeyVault {
            let vault = try TPM2KeyVault(tcti: tpm.tcti, stateDirectory: state, pcrs: [], makeDAProtected: true)
            vaults.append(vault)
            return vault
        }
        var vault = try openOld()
        _ = try vault.storageKey()
        _ = try vault.deviceIdentity(create: true)
        XCTAssertTrue(vault.summary.contains("lack noDA"), "the start-up line warns: \(vault.summary)")
        var counters: [UInt32] = []
        var lockedAt: Int?
        for cut in 1...5 {
            _ = try XCTUnwrap(try vault.deviceIdentity(create: false)).signature(for: [1])
            try powerCut(tpm, vault)
            vault = try openOld()
            counters.append(try vault.lockoutCounter())
            do {
                _ = try vault.storageKey()
            } catch let error as SecureKeyError {
                guard case .locked(_, let fix) = error else { return XCTFail("cut \(cut): \(error)") }
                XCTAssertTrue(fix.contains("tpm2_dictionarylockout --clear-lockout"), fix)
                print("tpm2: older objects, cut \(cut): \(error)")
                lockedAt = cut
                break
            }
        }
        XCTAssertEqual(lockedAt, 3, "swtpm locks out after 3 failures; counters \(counters)")
        XCTAssertEqual(counters, [1, 2, 3])
        print("tpm2: DA lockout counter after each unclean power cut (objects without noDA): \(counters)")
        // The fix the message names.
        guard access("/usr/bin/tpm2_dictionarylockout", X_OK) == 0 else { return }
        vault.close()
        let clear = try AgentProcess("/usr/bin/tpm2_dictionarylockout", ["-T", tpm.tcti, "--clear-lockout"])
        XCTAssertTrue(clear.wait(timeoutSeconds: 10) { !clear.isRunning })
        XCTAssertEqual(clear.stop(), 0, clear.stderr)
        vault = try openOld()
        XCTAssertNoThrow(try vault.storageKey(), "unseals again once the lockout is cleared")
    }

    /// A clean close ends with TPM2_Shutdown: a power cut after it is orderly, even for objects
    /// without noDA.
    func testACleanCloseMakesTheNextPowerCutOrderly() throws {
        let tpm = try startTPM()
        let state = folder("opencarkey-tpm2-state")
        var counters: [UInt32] = []
        for _ in 1...4 {
            let vault = try TPM2KeyVault(tcti: tpm.tcti, stateDirectory: state, pcrs: [], makeDAProtected: true)
            vaults.append(vault)
            _ = try vault.storageKey()
            _ = try XCTUnwrap(try vault.deviceIdentity(create: true)).signature(for: [1])
            counters.append(try vault.lockoutCounter())
            vault.close()
            tpm.kill()
            try tpm.powerCycle()
        }
        XCTAssertEqual(counters, [0, 0, 0, 0])
    }

    // MARK: failures

    /// No library is loaded any more: transports this client does not speak are refused at
    /// open with the fix named, and nothing is written.
    func testTransportsThisClientDoesNotSpeakAreRefusedWithTheFix() {
        expectError("tabrmd", { _ = try TPM2KeyVault(tcti: "tabrmd:bus_type=system", stateDirectory: "/nonexistent") }) { error in
            guard case .deviceMissing(let device, let fix) = error else { return false }
            return device.contains("tabrmd") && fix.contains("device:/dev/tpmrm0")
        }
        expectError("mssim", { _ = try TPM2KeyVault(tcti: "mssim:host=127.0.0.1,port=2321", stateDirectory: "/nonexistent") }) { error in
            guard case .deviceMissing(_, let fix) = error else { return false }
            return fix.contains("swtpm")
        }
        expectError("a device that is not there", { _ = try TPM2KeyVault(tcti: "device:/nonexistent/tpmrm9", stateDirectory: "/nonexistent") }) { error in
            guard case .deviceMissing(let device, let fix) = error else { return false }
            return device.contains("/nonexistent/tpmrm9") && fix.contains("ENOENT") || fix.contains("No such file")
        }
    }

    func testAVanishedTPMGivesATypedErrorNotACrash() throws {
        let tpm = try startTPM()
        let vault = try open(tpm, folder("opencarkey-tpm2-state"))
        let identity = try XCTUnwrap(try vault.deviceIdentity(create: true))
        let tcti = tpm.tcti
        tpm.kill()
        let gone: (SecureKeyError) -> Bool = { error in
            guard case .deviceMissing(let device, _) = error else { return false }
            return device.contains(tcti)
        }
        expectError("sign after the TPM died", { _ = try identity.signature(for: [1, 2, 3]) }) { error in
            print("tpm2: first call after the TPM died: \(error)")
            return gone(error)
        }
        expectError("storage key after the TPM died", { _ = try vault.storageKey() }, gone)
        expectError("ECDH after the TPM died", { _ = try identity.sharedSecret(with: try P256PrivateKey.generate().publicKey) }, gone)
        // Opening against nothing: deviceMissing that names the TCTI.
        expectError("open with no TPM", { _ = try TPM2KeyVault(tcti: tcti, stateDirectory: "/nonexistent") }) { error in
            guard case .deviceMissing(let device, _) = error else { return false }
            return device.contains(tcti)
        }
        vault.close()
        expectError("sign after close", { _ = try identity.signature(for: [1]) }) { error in
            if case .deviceMissing = error { return true }
            return false
        }
    }

    /// The TPM killed at run time and started again on the same port and state: calls fail
    /// meanwhile, the vault reports the loss once (not per call), and reconnects by itself:
    /// the identity signs again with a reloaded handle, the storage key unseals.
    func testATPMThatComesBackIsReconnectedWithOneReportEachWay() throws {
        final class Lines: @unchecked Sendable {
            private let lock = NSLock()
            private var items: [String] = []
            func append(_ line: String) { lock.lock(); items.append(line); lock.unlock() }
            var all: [String] { lock.lock(); defer { lock.unlock() }; return items }
        }
        let tpm = try startTPM()
        let vault = try open(tpm, folder("opencarkey-tpm2-state"))
        let reports = Lines()
        vault.onConnectionChange { reports.append($0) }
        let identity = try XCTUnwrap(try vault.deviceIdentity(create: true))
        let key = try vault.storageKey()
        tpm.kill()
        for _ in 0..<5 { XCTAssertThrowsError(try identity.signature(for: [1])) }
        XCTAssertThrowsError(try vault.storageKey())
        XCTAssertEqual(reports.all.count, 1, "one report for the loss: \(reports.all)")
        XCTAssertTrue(reports.all.first?.contains("\(tpm.tcti) stopped answering") == true, "\(reports.all)")
        try tpm.powerCycle()
        var signature: ECDSASignature?
        let deadline = Monotonic.seconds() + 20
        while signature == nil && Monotonic.seconds() < deadline {
            signature = try? identity.signature(for: [2])
            if signature == nil { usleep(100_000) }
        }
        let signed = try XCTUnwrap(signature, "the identity signs again once the TPM is back")
        XCTAssertTrue(identity.publicKey.isValidSignature(signed, for: [2]))
        XCTAssertEqual(try vault.storageKey(), key)
        XCTAssertEqual(reports.all.count, 2, "\(reports.all)")
        XCTAssertTrue(reports.all.last?.contains("answers again") == true, "\(reports.all)")
        print("tpm2: reports across a TPM restart: \(reports.all)")
    }

    func testTamperedBlobsAreRefused() throws {
        let tpm = try startTPM()
        let state = folder("opencarkey-tpm2-state")
        let vault = try open(tpm, state)
        _ = try vault.deviceIdentity(create: true)
        _ = try vault.storageKey()
        vault.close()
        let refused: (SecureKeyError) -> Bool = { error in
            switch error {
            case .malformed, .foreignObject: return true
            default: return false
            }
        }
        for name in ["tpm2-storage.priv", "tpm2-storage.pub", "tpm2-identity.priv", "tpm2-identity.pub"] {
            let path = state + "/" + name
            let original = try Files.read(path)
            for tamper in ["flip", "truncate", "append"] {
                var changed = original
                switch tamper {
                case "flip": changed[changed.count - 5] ^= 0x40
                case "truncate": changed.removeLast(3)
                default: changed.append(0)
                }
                try Files.writeAtomically(changed, to: path)
                let reopened = try open(tpm, state)
                if name.hasPrefix("tpm2-storage") {
                    expectError("\(tamper) \(name)", { _ = try reopened.storageKey() }, refused)
                } else {
                    expectError("\(tamper) \(name)", { _ = try reopened.deviceIdentity(create: true) }, refused)
                }
                reopened.close()
            }
            try Files.writeAtomically(original, to: path)
        }
        // Restored blobs load again.
        let restored = try open(tpm, state)
        XCTAssertNotNil(try restored.deviceIdentity(create: false))
        XCTAssertEqual(try restored.storageKey().count, 32)
        // Half a pair is refused, never silently replaced by a new key.
        unlink(state + "/tpm2-identity.priv")
        restored.close()
        let half = try open(tpm, state)
        expectError("identity .pub without .priv", { _ = try half.deviceIdentity(create: true) }, refused)
    }
}

private final class FailureCount: Sendable {
    let count = Atomic<Int>(0)
}

private extension Array where Element == UInt8 {
    func windows(_ size: Int) -> [ArraySlice<UInt8>] {
        guard count >= size else { return [] }
        return (0...(count - size)).map { self[$0..<($0 + size)] }
    }
}

private extension String {
    /// Two decimals, without Foundation.
    init(format2 value: Double) {
        let hundredths = Int((value * 100).rounded())
        let fraction = hundredths % 100
        self = "\(hundredths / 100).\(fraction < 10 ? "0" : "")\(fraction)"
    }
}

// PKCS11KeyVault against a real SoftHSM2 token (PKCS11SoftHSM.swift): the identity and the
// storage key live on the token and survive a reopen; signatures and ECDH agree with the host's
// P-256 code; and every refusal is typed: a wrong PIN, a token with another label, a missing
// module, a state directory from another board's token, a tampered wrapped key.
#if canImport(Glibc)
import Glibc
#endif
import CPKCS11
@testable import Drivers
import Protocol
import TestHarness
import XCTest

final class PKCS11VaultTests: XCTestCase {
    private var cleanups: [() -> Void] = []

    override func tearDown() {
        // Vaults first (each stops its bridge, which finalizes its module), then the folders.
        for cleanup in cleanups.reversed() { cleanup() }
        cleanups = []
        unsetenv("SOFTHSM2_CONF")
        super.tearDown()
    }

    private func token(_ label: String = "carkey-test") throws -> SoftHSMToken {
        let token = try requireDevice { try SoftHSMToken(label: label) }
        cleanups.append { token.remove() }
        return token
    }

    private func stateDirectory() -> String {
        let folder = TestFolders.make(prefix: "opencarkey-p11state")
        cleanups.append { TestFolders.remove(folder) }
        return folder
    }

    private func open(_ token: SoftHSMToken, state: String, label: String? = nil, pin: Bytes? = nil) throws -> PKCS11KeyVault {
        let vault = try PKCS11KeyVault(modulePath: SoftHSMToken.modulePath, tokenLabel: label ?? token.label,
                                       pin: pin ?? token.pin, stateDirectory: state)
        cleanups.append { vault.close() }
        return vault
    }

    /// Every object on the token visible to a logged-in user.
    private func objectCount(_ vault: PKCS11KeyVault) throws -> Int {
        try vault.token.serialized { (calls) throws(SecureKeyError) -> Int in try calls.find([], limit: 64).count }
    }

    func testIdentityIsCreatedOnTheTokenAndIsTheSameAfterReopen() throws {
        let token = try token()
        let state = stateDirectory()
        let first = try open(token, state: state)
        XCTAssertEqual(first.kind, "pkcs11")
        XCTAssertNil(try first.deviceIdentity(create: false), "a fresh token has no identity")
        let created = try XCTUnwrap(try first.deviceIdentity(create: true))
        XCTAssertEqual(try first.deviceIdentity(create: false)?.publicKey, created.publicKey)
        XCTAssertEqual(try objectCount(first), 2, "one key pair")
        let summary = first.summary
        XCTAssertTrue(summary.contains(SoftHSMToken.modulePath) && summary.contains(token.label) && summary.contains("SoftHSM"), summary)
        XCTAssertFalse(summary.contains(String(decoding: token.pin, as: UTF8.self)), "the summary never shows the PIN")
        first.close()

        let second = try open(token, state: state)
        let reopened = try XCTUnwrap(try second.deviceIdentity(create: false), "found by label and ID after reopen")
        XCTAssertEqual(reopened.publicKey, created.publicKey)
        XCTAssertEqual(try objectCount(second), 2, "create: true on reopen makes no second pair")
        print("pkcs11: \(summary)")
    }

    func testSignaturesVerifyAndECDHMatchesTheHost() throws {
        let token = try token()
        let vault = try open(token, state: stateDirectory())
        let identity = try XCTUnwrap(try vault.deviceIdentity(create: true))
        let message = Array("challenge 0001 for the car".utf8)
        let signature = try identity.signature(for: message)
        XCTAssertEqual(signature.rawRepresentation.count, 64)
        XCTAssertTrue(identity.publicKey.isValidSignature(signature, for: message))
        XCTAssertFalse(identity.publicKey.isValidSignature(signature, for: message + [0]), "a signature binds its message")
        XCTAssertFalse(try P256PrivateKey.generate().publicKey.isValidSignature(signature, for: message))

        let peer = try P256PrivateKey.generate()
        let onToken = try identity.sharedSecret(with: peer.publicKey)
        XCTAssertEqual(onToken.count, 32)
        XCTAssertEqual(onToken, try peer.sharedSecret(with: identity.publicKey))
        XCTAssertEqual(try objectCount(vault), 2, "the derived secret object is destroyed")

        var signTimes: [Double] = []
        var ecdhTimes: [Double] = []
        for round in 0..<50 {
            let text = message + [UInt8(round)]
            var began = Monotonic.seconds()
            let signed = try identity.signature(for: text)
            signTimes.append((Monotonic.seconds() - began) * 1000)
            XCTAssertTrue(identity.publicKey.isValidSignature(signed, for: text))
            began = Monotonic.seconds()
            _ = try identity.sharedSecret(with: peer.publicKey)
            ecdhTimes.append((Monotonic.seconds() - began) * 1000)
        }
        print("pkcs11: SoftHSM2 sign min \(Self.ms(signTimes.min()!)) median \(Self.ms(Self.median(signTimes))) ms, "
              + "ECDH min \(Self.ms(ecdhTimes.min()!)) median \(Self.ms(Self.median(ecdhTimes))) ms (50 runs)")
    }

    func testKeysOnTheTokenAreSensitiveAndNeverExtractable() throws {
        let token = try token()
        let vault = try open(token, state: stateDirectory())
        _ = try vault.deviceIdentity(create: true)
        _ = try vault.storageKey()
        try vault.token.serialized { (calls) throws(SecureKeyError) in
            for (objectClass, label) in [(CKO_PRIVATE_KEY, "opencarkey-identity"), (CKO_SECRET_KEY, "opencarkey-storage-wrap")] {
                let found = try calls.find([.ulong(CKA_CLASS, objectClass), .bytes(CKA_LABEL, Array(label.utf8))])
                XCTAssertEqual(found.count, 1, label)
                guard let key = found.first else { continue }
                XCTAssertEqual(try calls.attribute(CKA_TOKEN, of: key, "token"), [1], label)
                XCTAssertEqual(try calls.attribute(CKA_PRIVATE, of: key, "private"), [1], label)
                XCTAssertEqual(try calls.attribute(CKA_SENSITIVE, of: key, "sensitive"), [1], label)
                XCTAssertEqual(try calls.attribute(CKA_EXTRACTABLE, of: key, "extractable"), [0], label)
                XCTAssertEqual(try calls.attribute(CKA_NEVER_EXTRACTABLE, of: key, "never extractable"), [1], label)
                // The key value itself is refused.
                XCTAssertThrowsError(try calls.attribute(CKA_VALUE, of: key, "value"), label)
            }
        }
    }

    func testConcurrentSignaturesAndECDHAreSerialised() throws {
        let token = try token()
        let vault = try open(token, state: stateDirectory())
        let identity = try XCTUnwrap(try vault.deviceIdentity(create: true))
        let peer = try P256PrivateKey.generate()
        let expected = try peer.sharedSecret(with: identity.publicKey)
        final class Failures: @unchecked Sendable {
            let lock = Lock()
            var count = 0
            func add() { lock.withLock { count += 1 } }
        }
        let failures = Failures()
        let threads = try (0..<4).map { index in
            try SystemThread.start(name: "p11-\(index)") {
                for round in 0..<200 {
                    let message: Bytes = [UInt8(index), UInt8(round)]
                    guard let signed = try? identity.signature(for: message),
                          identity.publicKey.isValidSignature(signed, for: message),
                          (try? identity.sharedSecret(with: peer.publicKey)) == expected else {
                        failures.add()
                        continue
                    }
                }
            }
        }
        threads.forEach { $0.join() }
        XCTAssertEqual(failures.lock.withLock { failures.count }, 0, "every call from 4 threads (200 rounds each) on one session succeeded")
    }

    func testStorageKeyIsTheSame32BytesAfterReopen() throws {
        let token = try token()
        let state = stateDirectory()
        let first = try open(token, state: state)
        let key = try first.storageKey()
        XCTAssertEqual(key.count, 32)
        XCTAssertEqual(try first.storageKey(), key)
        let blob = try Files.read(first.storageKeyPath)
        XCTAssertEqual(blob.count, 12 + 32 + 16, "IV || ciphertext || tag")
        XCTAssertEqual(try Files.mode(of: first.storageKeyPath), 0o600)
        XCTAssertFalse(Self.contains(blob, key), "the file never holds the key in the clear")
        first.close()

        let second = try open(token, state: state)
        XCTAssertEqual(try second.storageKey(), key)
        XCTAssertEqual(try Files.read(second.storageKeyPath), blob, "an existing file is never rewritten")
    }

    func testWrongPINIsLockedAndCreatesNothing() throws {
        let token = try token()
        let state = stateDirectory()
        let wrong = Array("999999".utf8)
        XCTAssertThrowsError(try open(token, state: state, pin: wrong)) { error in
            guard case .locked(let device, let fix)? = error as? SecureKeyError else {
                return XCTFail("expected .locked, got \(error)")
            }
            XCTAssertTrue(device.contains(token.label))
            XCTAssertTrue(fix.contains("wrong PIN"), fix)
            XCTAssertFalse("\(error)".contains("999999"), "no PIN in error text")
        }
        XCTAssertEqual(Self.entries(state), [], "nothing written to the state directory")
        let vault = try open(token, state: state)
        XCTAssertEqual(try objectCount(vault), 0, "nothing created on the token")
        XCTAssertNil(try vault.deviceIdentity(create: false))
    }

    func testLoginAnswersMapToTypedErrors() {
        // SoftHSM never locks its user PIN, so the codes a hardware token answers are checked
        // on the mapping itself.
        XCTAssertNil(PKCS11Token.loginFailure(CKR_OK, label: "t"))
        XCTAssertNil(PKCS11Token.loginFailure(CKR_USER_ALREADY_LOGGED_IN, label: "t"))
        guard case .locked(_, let wrongFix)? = PKCS11Token.loginFailure(CKR_PIN_INCORRECT, label: "t") else {
            return XCTFail("CKR_PIN_INCORRECT is .locked")
        }
        XCTAssertTrue(wrongFix.contains("wrong PIN"))
        guard case .locked(_, let lockedFix)? = PKCS11Token.loginFailure(CKR_PIN_LOCKED, label: "t") else {
            return XCTFail("CKR_PIN_LOCKED is .locked")
        }
        XCTAssertTrue(lockedFix.contains("security officer") && lockedFix.contains("SO PIN"), lockedFix)
        guard case .operationFailed(_, let code, _)? = PKCS11Token.loginFailure(CKR_DEVICE_REMOVED, label: "t") else {
            return XCTFail("other codes are .operationFailed")
        }
        XCTAssertEqual(code, UInt64(CKR_DEVICE_REMOVED))
    }

    func testECPointAttributeFormsAreUnwrappedOrRefused() throws {
        let point = try P256PrivateKey.generate().publicKey.sec1
        XCTAssertEqual(PKCS11ECPoint.uncompressedPoint(fromAttribute: [0x04, 0x41] + point), point, "DER OCTET STRING (v2.40)")
        XCTAssertEqual(PKCS11ECPoint.uncompressedPoint(fromAttribute: point), point, "bare point (older modules)")
        XCTAssertNil(PKCS11ECPoint.uncompressedPoint(fromAttribute: [0x04, 0x40] + point), "wrong DER length")
        XCTAssertNil(PKCS11ECPoint.uncompressedPoint(fromAttribute: [0x04, 0x41] + point.dropLast()), "short point")
        XCTAssertNil(PKCS11ECPoint.uncompressedPoint(fromAttribute: [0x04, 0x21, 0x02] + point[1...32]), "compressed point")
        XCTAssertNil(PKCS11ECPoint.uncompressedPoint(fromAttribute: []))
    }

    func testTokenWithAnotherLabelIsDeviceMissing() throws {
        let token = try token("board-a")
        XCTAssertThrowsError(try open(token, state: stateDirectory(), label: "board-b")) { error in
            guard case .deviceMissing(let device, let fix)? = error as? SecureKeyError else {
                return XCTFail("expected .deviceMissing, got \(error)")
            }
            XCTAssertTrue(device.contains("board-b"), device)
            XCTAssertTrue(fix.contains("softhsm2-util --show-slots") && fix.contains("p11tool --list-tokens"), fix)
            XCTAssertTrue(fix.contains("\"board-a\""), "names the tokens that are there: \(fix)")
        }
    }

    func testMissingModuleIsDeviceMissing() throws {
        let path = "/nonexistent/opencarkey/libmissing-pkcs11.so"
        XCTAssertThrowsError(try PKCS11KeyVault(modulePath: path, tokenLabel: "t", pin: Array("1234".utf8),
                                                stateDirectory: "/nonexistent")) { error in
            guard case .deviceMissing(let device, let fix)? = error as? SecureKeyError else {
                return XCTFail("expected .deviceMissing, got \(error)")
            }
            XCTAssertTrue(device.contains(path), device)
            XCTAssertTrue(fix.contains("softhsm2") && fix.contains("libtpm2-pkcs11-1") && fix.contains("vendor"), fix)
        }
        // A file that is not a PKCS#11 module.
        let folder = stateDirectory()
        try Files.writeAtomically(Array("not an ELF".utf8), to: folder + "/fake.so")
        XCTAssertThrowsError(try PKCS11KeyVault(modulePath: folder + "/fake.so", tokenLabel: "t", pin: [], stateDirectory: folder)) { error in
            guard case .deviceMissing? = error as? SecureKeyError else { return XCTFail("expected .deviceMissing, got \(error)") }
        }
    }

    func testStateDirectoryWithAnotherBoardsTokenIsForeign() throws {
        let state = stateDirectory()
        let boardA = try token("car")
        let vaultA = try open(boardA, state: state)
        _ = try vaultA.storageKey()
        let identityA = try XCTUnwrap(try vaultA.deviceIdentity(create: true))
        vaultA.close()
        let blob = try Files.read(state + "/pkcs11-storage.key")

        // The SD card moved to another board: a token with the same label, freshly initialised.
        // Vault B has a new bridge, whose module reads SOFTHSM2_CONF afresh.
        let boardB = try token("car")
        let vaultB = try open(boardB, state: state)
        // Board B is in use: its token has its own storage-wrap key (and its own state folder),
        // so A's file reaches the decrypt and fails there, not at the missing key.
        let ownB = try open(boardB, state: stateDirectory())
        XCTAssertEqual(try ownB.storageKey().count, 32)
        ownB.close()
        XCTAssertThrowsError(try vaultB.storageKey()) { error in
            guard case .foreignObject(let what, let fix)? = error as? SecureKeyError else {
                return XCTFail("expected .foreignObject, got \(error)")
            }
            XCTAssertTrue(what.contains("pkcs11-storage.key"), what)
            XCTAssertTrue(fix.contains("restore the token") && fix.contains("migrate"), fix)
        }
        XCTAssertNil(try vaultB.deviceIdentity(create: false), "board A's identity is not on board B's token")
        XCTAssertEqual(try Files.read(state + "/pkcs11-storage.key"), blob, "the foreign file is left for the operator")
        vaultB.close()

        // Board A's token back (every vault on B closed, so the module rereads the config): everything opens again.
        boardA.activate()
        let again = try open(boardA, state: state)
        XCTAssertEqual(try again.deviceIdentity(create: false)?.publicKey, identityA.publicKey)
        XCTAssertEqual(try again.storageKey().count, 32)
    }

    func testTamperedWrappedKeyIsForeign() throws {
        let token = try token()
        let state = stateDirectory()
        let vault = try open(token, state: state)
        let key = try vault.storageKey()
        let path = vault.storageKeyPath
        let original = try Files.read(path)
        // A flipped bit in the IV, the ciphertext and the tag.
        for index in [0, 12, 20, original.count - 1] {
            var tampered = original
            tampered[index] ^= 0x01
            try Files.writeAtomically(tampered, to: path)
            XCTAssertThrowsError(try vault.storageKey(), "byte \(index) flipped") { error in
                guard case .foreignObject? = error as? SecureKeyError else { return XCTFail("expected .foreignObject, got \(error)") }
            }
        }
        try Files.writeAtomically(Array(original.prefix(40)), to: path)
        XCTAssertThrowsError(try vault.storageKey()) { error in
            guard case .malformed? = error as? SecureKeyError else { return XCTFail("expected .malformed, got \(error)") }
        }
        try Files.writeAtomically(original, to: path)
        XCTAssertEqual(try vault.storageKey(), key, "the untouched file still opens")
    }

    func testTwoVaultsOnOneTokenEachHaveABridgeAndClosingOneKeepsTheOther() throws {
        let token = try token()
        let state = stateDirectory()
        let first = try open(token, state: state)
        let second = try open(token, state: state)
        let identity = try XCTUnwrap(try first.deviceIdentity(create: true))
        first.close()
        XCTAssertThrowsError(try identity.signature(for: [1, 2, 3]), "a closed vault's key refuses")
        let other = try XCTUnwrap(try second.deviceIdentity(create: false))
        XCTAssertEqual(other.publicKey, identity.publicKey)
        let signed = try other.signature(for: [1, 2, 3])
        XCTAssertTrue(other.publicKey.isValidSignature(signed, for: [1, 2, 3]), "the second vault's bridge still holds its session")
    }

    // MARK: helpers

    private static func median(_ values: [Double]) -> Double {
        let sorted = values.sorted()
        return sorted.count % 2 == 1 ? sorted[sorted.count / 2] : (sorted[sorted.count / 2 - 1] + sorted[sorted.count / 2]) / 2
    }

    /// Milliseconds with two decimals, without Foundation.
    private static func ms(_ value: Double) -> String {
        let hundredths = Int((value * 100).rounded())
        let fraction = hundredths % 100
        return "\(hundredths / 100).\(fraction < 10 ? "0" : "")\(fraction)"
    }

    private static func contains(_ haystack: Bytes, _ needle: Bytes) -> Bool {
        guard needle.count <= haystack.count else { return false }
        return (0...(haystack.count - needle.count)).contains { Array(haystack[$0..<($0 + needle.count)]) == needle }
    }

    private static func entries(_ folder: String) -> [String] {
        guard let dir = opendir(folder) else { return ["<unreadable>"] }
        defer { closedir(dir) }
        var names: [String] = []
        while let entry = readdir(dir) {
            let name = DirectoryEntry.name(entry)
            if name != "." && name != ".." { names.append(name) }
        }
        return names
    }
}

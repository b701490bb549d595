// carkey-pkcs11-bridge as the agent runs it (tools/pkcs11-bridge, docs/pkcs11-bridge.md): the
// built binary beside the test bundle (`make build` puts it there), against SoftHSM2. It needs
// no glibc newer than 2.34, takes the PIN over the pipe only, refuses a stdin that is not a
// pipe, answers a malformed request with a typed refusal, ends on a lying frame length and when
// its stdin closes, refuses a file that is not a PKCS#11 module, and a vault whose bridge is
// killed logs the loss once, restarts it with backoff and logs the recovery.
#if canImport(Glibc)
import Glibc
#endif
import CPKCS11
@testable import Drivers
import Protocol
import Synchronization
import TestHarness
import XCTest

final class PKCS11BridgeProcessTests: XCTestCase {
    private func bridge() throws -> String {
        let path = AgentProcess.besideTheRunningProgram(PKCS11BridgeLocation.executableName)
        return try requireDevice {
            guard access(path, X_OK) == 0 else { throw HarnessUnavailable("no \(path): run `make build` (it builds the bridge)") }
            return path
        }
    }

    /// A SoftHSM2 token labelled `label`, a vault on it whose bridge restarts re-read the PIN
    /// through `reloadPIN` (given the token's right PIN), and the lines the vault logs on
    /// connection changes. Removed at the test's end.
    private func tokenVault(_ label: String, reloadPIN: @escaping @Sendable (Bytes) throws(SecureKeyError) -> Bytes)
        throws -> (vault: PKCS11KeyVault, token: SoftHSMToken, lines: LoggedLines) {
        _ = try bridge()
        let token = try requireDevice { try SoftHSMToken(label: label) }
        let state = TestFolders.make(prefix: "opencarkey-bridge")
        let vault = try PKCS11KeyVault(modulePath: SoftHSMToken.modulePath, tokenLabel: token.label, pin: token.pin,
                                       stateDirectory: state, reloadPIN: { [pin = token.pin] () throws(SecureKeyError) -> Bytes in
            try reloadPIN(pin)
        })
        addTeardownBlock {
            vault.close()
            TestFolders.remove(state)
            token.remove()
            unsetenv("SOFTHSM2_CONF")
        }
        let lines = LoggedLines()
        vault.onConnectionChange { line in lines.append(line) }
        return (vault, token, lines)
    }

    /// Runs `path` to its end (stdin /dev/null): exit status and output.
    static func run(_ path: String, _ arguments: [String]) throws -> (status: Int32?, stdout: String, stderr: String) {
        let process = try AgentProcess(path, arguments)
        _ = process.wait(timeoutSeconds: 30) { !process.isRunning }
        let status = process.stop()
        return (status, process.stdout, process.stderr)
    }

    /// The newest GLIBC_x.y symbol version `binary` needs (objdump -T; readelf for another
    /// architecture's binary).
    static func newestGlibcVersion(_ binary: String) throws -> [Int] {
        var listing = try Self.run("/usr/bin/objdump", ["-T", binary])
        if listing.status != 0 { listing = try Self.run("/usr/bin/readelf", ["--dyn-syms", "-W", binary]) }
        XCTAssertEqual(listing.status, 0, listing.stderr)
        let versions = listing.stdout.split(whereSeparator: { !$0.isLetter && !$0.isNumber && $0 != "_" && $0 != "." })
            .filter { $0.hasPrefix("GLIBC_2.") }
            .map { $0.dropFirst("GLIBC_".count).split(separator: ".").compactMap { Int($0) } }
        return try XCTUnwrap(versions.max { $0.lexicographicallyPrecedes($1) }, "no GLIBC versions in \(binary)")
    }

    func testTheBridgeRunsOnDebian12() throws {
        let newest = try Self.newestGlibcVersion(try bridge())
        XCTAssertFalse([2, 34].lexicographicallyPrecedes(newest), "needs GLIBC_\(newest) (boards have 2.36; at most 2.34 allowed)")
        let libraries = try Self.run("/usr/bin/ldd", [try bridge()]).stdout
        XCTAssertFalse(libraries.contains("swift") || libraries.contains("ssl"), "libc only: \(libraries)")
    }

    func testStdinMustBeAPipeAndTheModulePathAbsolute() throws {
        let bridge = try bridge()
        XCTAssertEqual(try Self.run(bridge, [SoftHSMToken.modulePath]).status, 2, "stdin /dev/null is refused")
        let child = try ChildProcess(bridge, ["relative.so"])
        XCTAssertEqual(child.stop(), 2)
    }

    /// A frame that parses but is not a request is refused in band; a length over the cap ends
    /// the bridge (status 3); closing stdin ends it with 0.
    func testMalformedFramesAreRefusedAndALyingLengthEndsTheBridge() throws {
        let path = try bridge()
        let process = try PKCS11BridgeProcess(executable: path, modulePath: SoftHSMToken.modulePath)
        var notOpen = PKCS11BridgeRequest.destroy(1)
        XCTAssertEqual(try process.exchange(&notOpen), .bridge(.notOpen, detail: "no session: OPEN first"))
        var short: Bytes = [0, 0, 0, 2, 1, 0]
        XCTAssertEqual(try process.exchange(&short), .bridge(.malformed, detail: "OPEN"))
        XCTAssertEqual(short, [0, 0, 0, 0, 0, 0], "the request is wiped once sent")
        var oversized: Bytes = [0, 0, 0x20, 0x01, 1]
        XCTAssertThrowsError(try process.exchange(&oversized)) { error in
            XCTAssertTrue("\(error)".contains("exited with status 3"), "\(error)")
        }
        XCTAssertTrue(process.isGone)

        let second = try ChildProcess(path, [SoftHSMToken.modulePath])
        XCTAssertEqual(second.stop(), 0, "stdin closed: a clean exit")
    }

    func testAFileThatIsNotAPKCS11ModuleAndAMissingBridgeAreNamed() throws {
        _ = try bridge()
        let candidates: [String] = ["/lib/x86_64-linux-gnu/libc.so.6", "/lib/aarch64-linux-gnu/libc.so.6"]
        let libc = try XCTUnwrap(candidates.first { (path: String) in access(path, R_OK) == 0 })
        XCTAssertThrowsError(try PKCS11KeyVault(modulePath: libc, tokenLabel: "t", pin: [], stateDirectory: "/nonexistent")) { error in
            guard case .deviceMissing(_, let fix)? = error as? SecureKeyError else { return XCTFail("\(error)") }
            XCTAssertTrue(fix.contains("not a PKCS#11 module"), fix)
        }
        let missing = "/nonexistent/carkey-pkcs11-bridge"
        XCTAssertThrowsError(try PKCS11KeyVault(modulePath: SoftHSMToken.modulePath, tokenLabel: "t", pin: [], stateDirectory: "/nonexistent",
                                                bridge: missing)) { error in
            guard case .deviceMissing(let device, let fix)? = error as? SecureKeyError else { return XCTFail("\(error)") }
            XCTAssertTrue(device.contains(missing) && fix.contains("\"bridge\""), "\(device): \(fix)")
        }
    }

    /// A restart that meets a wrong PIN (the PIN file changed) is not tried again: each try
    /// would spend one of the token's PIN tries.
    func testARestartRefusedForThePINIsNotRetried() throws {
        let reloads = Mutex(0)
        let (vault, _, lines) = try tokenVault("bridge-pin") { (_: Bytes) throws(SecureKeyError) -> Bytes in
            reloads.withLock { $0 += 1 }
            return Array("999999".utf8)
        }
        let identity = try XCTUnwrap(try vault.deviceIdentity(create: true))
        let pid = try vault.token.serialized { (calls) throws(SecureKeyError) -> pid_t in calls.bridge.pid }
        kill(pid, SIGKILL)
        usleep(100_000)
        XCTAssertThrowsError(try identity.signature(for: [1]), "the call that meets the dead bridge")
        XCTAssertThrowsError(try identity.signature(for: [2])) { error in
            guard case .locked? = error as? SecureKeyError else { return XCTFail("\(error)") }
        }
        usleep(600_000)
        XCTAssertThrowsError(try identity.signature(for: [3]), "still refused, without a new try")
        XCTAssertEqual(reloads.withLock { $0 }, 1, "one try with the wrong PIN")
        XCTAssertTrue(lines.all.last?.contains("not retried") ?? false, "\(lines.all)")
    }

    func testTheBridgeGetsThePINOverThePipeAndARestartAfterItsDeathIsLoggedOnce() throws {
        // The first restart finds the PIN file unreadable: the next try waits for the backoff.
        let reloads = Mutex(0)
        let (vault, token, lines) = try tokenVault("bridge-restart") { (pin: Bytes) throws(SecureKeyError) -> Bytes in
            guard reloads.withLock({ $0 += 1; return $0 }) > 1 else { throw SecureKeyError.locked(device: "pin file", fix: "unreadable") }
            return pin
        }
        let identity = try XCTUnwrap(try vault.deviceIdentity(create: true))
        let key = try vault.storageKey()

        let pid = try vault.token.serialized { (calls) throws(SecureKeyError) -> pid_t in calls.bridge.pid }
        let commandLine = try Files.read("/proc/\(pid)/cmdline").split(separator: 0).map { String(decoding: $0, as: UTF8.self) }
        XCTAssertEqual(commandLine.count, 2, "the module path is the only argument: \(commandLine)")
        XCTAssertEqual(commandLine.last, SoftHSMToken.modulePath)
        let environment = try Files.read("/proc/\(pid)/environ")
        XCTAssertFalse(String(decoding: environment, as: UTF8.self).contains(String(decoding: token.pin, as: UTF8.self) + "\0"),
                       "no PIN in the environment")

        kill(pid, SIGKILL)
        usleep(100_000)
        XCTAssertThrowsError(try identity.signature(for: [1]), "the call that meets the dead bridge fails")
        XCTAssertThrowsError(try identity.signature(for: [2]), "the first restart fails (the PIN file)")
        XCTAssertThrowsError(try identity.signature(for: [2])) { error in
            XCTAssertTrue("\(error)".contains("next try in"), "no new try before the backoff: \(error)")
        }
        XCTAssertEqual(reloads.withLock { $0 }, 1)
        usleep(600_000)
        let signature = try identity.signature(for: [3])
        XCTAssertTrue(identity.publicKey.isValidSignature(signature, for: [3]), "the identity is found again in the new session")
        XCTAssertEqual(try vault.storageKey(), key)
        let logged = lines.all
        XCTAssertEqual(logged.count, 2, "\(logged)")
        XCTAssertTrue(logged.first?.contains("killed by signal 9") ?? false, "\(logged)")
        XCTAssertTrue(logged.last?.contains("answers again") ?? false, "\(logged)")
    }
}

/// The lines a vault logged, appended from its threads.
final class LoggedLines: Sendable {
    private let store = Mutex<[String]>([])
    func append(_ line: String) { store.withLock { $0.append(line) } }
    var all: [String] { store.withLock { $0 } }
}

// A failure the agent retries every second (a full disk under the last-use batch) is logged
// when it starts and when it ends, not on every retry. The agent's log goes to stderr, so the
// test points descriptor 2 at a file while it runs.
import XCTest
import Drivers
import Protocol
@testable import carkey_agent
#if canImport(Glibc)
import Glibc
#endif

final class LogOnChangeTests: XCTestCase {
    private var folder = ""
    private var store: CarStore!

    override func setUpWithError() throws {
        folder = AgentTestSupport.temporaryDirectory()
        store = try CarStore.open(stateDirectory: folder + "/state")
    }

    override func tearDown() {
        store = nil
        AgentTestSupport.removeTree(folder)
    }

    /// What `body` wrote to stderr.
    private func capturingStderr(_ body: () throws -> Void) throws -> String {
        let path = folder + "/stderr"
        let saved = dup(STDERR_FILENO)
        let file = open(path, O_WRONLY | O_CREAT | O_TRUNC, 0o600)
        XCTAssertTrue(saved >= 0 && file >= 0)
        dup2(file, STDERR_FILENO)
        close(file)
        defer {
            dup2(saved, STDERR_FILENO)
            close(saved)
        }
        try body()
        guard let stream = fopen(path, "r") else { return "" }
        defer { fclose(stream) }
        var bytes = [UInt8](repeating: 0, count: 1 << 16)
        let count = fread(&bytes, 1, bytes.count, stream)
        return String(decoding: bytes.prefix(count), as: UTF8.self)
    }

    func testAFailingLastUseWriteIsLoggedWhenItStartsAndWhenItEnds() throws {
        // The threshold is process-wide and other tests (and the console's `log level`) move it.
        let savedThreshold = LogLevel.threshold
        LogLevel.threshold = .info
        defer { LogLevel.threshold = savedThreshold }
        let owner = KeyRecord(publicKey: try P256PrivateKey.generate().publicKey, role: .owner, permissions: .all)
        try store.write { try $0.persist([.putKey(owner)]) }
        let keychain = StoredKeychain(store: store, keychain: try KeychainLoader.load(from: store).keychain, log: AgentLog(),
                                      nowMillis: 0)
        let id = KeyID(publicKey: owner.publicKey)
        // The disk "fills": every write of a sealed record fails.
        try store.database.transaction {
            try $0.execute("CREATE TEMP TRIGGER full BEFORE INSERT ON sealed_records BEGIN SELECT RAISE(ABORT, 'simulated full disk'); END")
        }
        let now = ProtocolTime(monotonicMillis: 0, wallSeconds: 1_800_000_000, wallClockTrusted: true)
        let failing = try capturingStderr {
            for second in 1...30 {
                keychain.recordUse(of: id, now: now)
                keychain.flushActivity(nowMillis: UInt64(second) * 1000, force: true)
            }
        }
        XCTAssertEqual(keychain.pendingActivityCount, 1, "kept for the next attempt")
        XCTAssertEqual(failing.split(separator: "\n").filter { $0.contains("last-use times not written") }.count, 1, failing)

        try store.database.transaction { try $0.execute("DROP TRIGGER temp.full") }
        let recovered = try capturingStderr { keychain.flushActivity(nowMillis: 31_000, force: true) }
        XCTAssertEqual(keychain.pendingActivityCount, 0)
        XCTAssertEqual(recovered, "carkey-agent: keychain: last-use times written again\n")
    }
}

// A simulated car for end-to-end tests: `carkey-agent run --simulate` in a temporary state
// directory, phones as `carkey phone` subprocesses, owners enrolled the only way there is
// (`carkey-agent pair` + `carkey phone enroll`). The clock is pinned with --clock-sync so a
// test never depends on whether the host happens to run NTP.
import XCTest
import Drivers
import Protocol
#if canImport(Glibc)
import Glibc
#endif

final class AgentHarness {
    static let vehicle = "OCK-SIM-0001"

    let folder: String
    private(set) var agent: BackgroundProcess?

    /// FOLDER/state unless the test put it elsewhere (a small disk).
    let stateDir: String
    var socketPath: String { stateDir + "/ble.sock" }
    var controlPath: String { stateDir + "/control.sock" }
    var carKeyArgument: String { "@" + stateDir + "/car-identity.pub" }

    init(stateDirectory: String? = nil) {
        folder = Subprocess.makeTemporaryDirectory()
        stateDir = stateDirectory ?? folder + "/state"
    }

    deinit {
        agent?.stop()
        Subprocess.removeTree(folder)
    }

    /// Starts the agent (default: clock not synchronised) and waits until it serves both sockets.
    @discardableResult
    func start(clockSync: String = "no", _ extra: [String] = []) throws -> BackgroundProcess {
        XCTAssertNil(agent, "one agent at a time")
        let process = try BackgroundProcess("carkey-agent", ["run", "--simulate", "--state-dir", stateDir, "--clock-sync", clockSync] + extra)
        let up = process.wait(timeoutSeconds: 20) {
            UnixSocket.inode(of: controlPath) != nil && process.stderr.contains("carkey-agent: control socket")
        }
        XCTAssertTrue(up, "agent did not start: \(process.stdout) \(process.stderr)")
        agent = process
        return process
    }

    /// SIGTERM; returns the exit status.
    @discardableResult
    func stop() -> Int32? {
        defer { agent = nil }
        return agent?.stop()
    }

    /// SIGKILL (a power cut to the agent: no clean stop runs); returns the exit status.
    @discardableResult
    func kill() -> Int32? {
        defer { agent = nil }
        return agent?.stop(signal: SIGKILL, timeoutSeconds: 5)
    }

    /// A fresh phone key in the test folder: its path and SEC1 public key hex.
    func keygen(_ name: String) throws -> (path: String, publicHex: String) {
        let path = folder + "/" + name + ".pem"
        let result = try Subprocess.run("carkey", ["keygen", "--out", path])
        XCTAssertEqual(result.status, 0, result.stderr)
        return (path, result.stdout.filter { !$0.isWhitespace })
    }

    func agentTool(_ arguments: [String]) throws -> ProcessResult {
        try Subprocess.run("carkey-agent", arguments)
    }

    /// `carkey-agent pair`; the code, failing the test when there is none.
    func pair() throws -> String {
        let result = try agentTool(["pair", "--state-dir", stateDir])
        XCTAssertEqual(result.status, 0, result.stdout + result.stderr)
        let code = result.stdout.split(separator: "\n").first { $0.hasPrefix("code ") }.map { String($0.dropFirst(5)) }
        return try XCTUnwrap(code, result.stdout)
    }

    func enroll(_ keyPath: String, code: String, extra: [String] = []) throws -> ProcessResult {
        try Subprocess.run("carkey", ["phone", "--key", keyPath, "--connect", "unix:" + socketPath] + extra + ["enroll", "--code", code])
    }

    /// A new owner enrolled through the pairing window; returns its key path and public key.
    func enrollOwner(_ name: String = "owner") throws -> (path: String, publicHex: String) {
        let key = try keygen(name)
        let result = try enroll(key.path, code: try pair())
        XCTAssertEqual(result.status, 0, result.stdout + result.stderr)
        XCTAssertTrue(result.stdout.hasPrefix("enrolled\n"), result.stdout)
        return key
    }

    /// `carkey phone ... COMMAND`. `pinned`: pass --car-key and --vehicle (a share holder has
    /// no KEYFILE.car); otherwise the key's .car file from enrollment is used.
    func phone(_ command: String, key: String, pinned: Bool = false, extra: [String] = []) throws -> ProcessResult {
        var arguments = ["phone", "--key", key, "--connect", "unix:" + socketPath]
        if pinned { arguments += ["--car-key", carKeyArgument, "--vehicle", Self.vehicle] }
        return try Subprocess.run("carkey", arguments + extra + [command])
    }

    /// The event log, read from the store directly.
    func events(since: Int64 = 0) throws -> [StoredEvent] {
        try CarStore.open(stateDirectory: stateDir).events(since: since, limit: 10_000)
    }

    /// Waits (at most 5 s) until the agent has logged an event matching `condition`: the
    /// agent handles a phone's disconnect after the phone process has already exited.
    func waitForEvent(_ condition: (StoredEvent) -> Bool) throws {
        for _ in 0..<250 {
            if try events().contains(where: condition) { return }
            usleep(20_000)
        }
        XCTFail("no such event in \(try events().map { "\($0.seq) \($0.event.action) \($0.event.result)" })")
    }

    func keyIDHex(_ publicHex: String) throws -> String {
        KeyID(publicKey: try P256PublicKey(sec1: try XCTUnwrap(Bytes(hex: publicHex)))).bytes.hexString
    }
}

extension ProcessResult {
    /// The first stdout line (`ok`, `fault: NAME (CODE)`, `enrolled`, ...).
    var firstLine: String { stdout.split(separator: "\n", omittingEmptySubsequences: false).first.map(String.init) ?? "" }
}

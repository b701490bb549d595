// A swtpm (TPM 2.0 simulator) on loopback for the vault tests (Drivers and the agent): its own state folder, two
// free ports (commands P, control P+1), started with startup-clear so it is ready at once, and
// killed by its owner (deinit too, so a failing test never leaves one running).
#if canImport(Glibc)
import Glibc
#endif

public final class TPM2SoftwareTPM {
    public let port: Int32
    public let stateFolder: String
    private var process: AgentProcess?

    /// "swtpm:host=127.0.0.1,port=P", the TCTI string for the vault.
    public var tcti: String { "swtpm:host=127.0.0.1,port=\(port)" }

    /// The swtpm binary, or HarnessUnavailable (tests skip, or fail under CARKEY_REQUIRE_ARTIFACTS=1).
    public static func binary() throws(HarnessUnavailable) -> String {
        for candidate in ["/usr/bin/swtpm", "/usr/local/bin/swtpm"] where access(candidate, X_OK) == 0 {
            return candidate
        }
        throw HarnessUnavailable("swtpm not installed (apt install swtpm swtpm-tools)")
    }

    /// Starts a TPM whose state lives in `stateFolder` (a fresh folder: a new TPM with its own
    /// seeds; the same folder again: the same TPM after a restart).
    public init(stateFolder: String) throws {
        self.stateFolder = stateFolder
        var lastLog = ""
        for _ in 0..<5 {
            let port = try Self.freePortPair()
            let started = try Self.launch(port: port, stateFolder: stateFolder)
            if let process = started.process {
                self.port = port
                self.process = process
                return
            }
            lastLog = started.log
        }
        throw HarnessUnavailable("swtpm did not start: \(lastLog)")
    }

    /// A power cut: the TPM killed (no TPM2_Shutdown reaches it), then started again on the
    /// same ports and state, so it runs TPM2_Startup(CLEAR) after an unorderly shutdown.
    public func powerCycle() throws {
        kill()
        var lastLog = ""
        // The port may stay busy for a moment after the kill.
        for _ in 0..<20 {
            let started = try Self.launch(port: port, stateFolder: stateFolder)
            if let process = started.process {
                self.process = process
                return
            }
            lastLog = started.log
            usleep(250_000)
        }
        throw HarnessUnavailable("swtpm did not start again on port \(port): \(lastLog)")
    }

    /// The dictionary-attack failure count (TPM2_PT_LOCKOUT_COUNTER) read with tpm2_getcap, or
    /// nil without tpm2-tools. swtpm serves one client at a time: read it with no agent connected.
    public func lockoutCounter() -> Int? {
        guard access("/usr/bin/tpm2_getcap", X_OK) == 0,
              let tool = try? AgentProcess("/usr/bin/tpm2_getcap", ["-T", tcti, "properties-variable"]) else { return nil }
        guard tool.wait(timeoutSeconds: 10, until: { !tool.isRunning }), tool.stop() == 0 else { return nil }
        for line in tool.stdout.split(separator: "\n") where line.hasPrefix("TPM2_PT_LOCKOUT_COUNTER:") {
            guard let value = line.split(separator: " ").last, value.hasPrefix("0x") else { return nil }
            return Int(value.dropFirst(2), radix: 16)
        }
        return nil
    }

    private static func launch(port: Int32, stateFolder: String) throws -> (process: AgentProcess?, log: String) {
        let process = try AgentProcess(try binary(), [
            "socket", "--tpm2",
            "--server", "type=tcp,port=\(port),bindaddr=127.0.0.1",
            "--ctrl", "type=tcp,port=\(port + 1),bindaddr=127.0.0.1",
            "--tpmstate", "dir=\(stateFolder)",
            "--flags", "not-need-init,startup-clear",
        ])
        if process.wait(timeoutSeconds: 10, until: { MosquittoBroker.canConnect(port: port + 1) }) {
            return (process, "")
        }
        let log = process.stderrTail
        _ = process.stop(signal: SIGKILL, timeoutSeconds: 2)
        return (nil, log)
    }

    deinit { kill() }

    /// Stops the TPM at once (SIGKILL: a TPM that vanishes, not one shutting down politely).
    public func kill() {
        guard let process else { return }
        _ = process.stop(signal: SIGKILL, timeoutSeconds: 5)
        self.process = nil
    }

    /// A port P with P+1 free as well (swtpm's control channel).
    private static func freePortPair() throws -> Int32 {
        for _ in 0..<20 {
            let port = try MosquittoBroker.freeLoopbackPort()
            if port < 65535, isFree(port + 1) { return port }
        }
        throw HarnessUnavailable("no two adjacent free loopback ports")
    }

    private static func isFree(_ port: Int32) -> Bool {
        let fd = socket(AF_INET, Int32(SOCK_STREAM.rawValue), 0)
        defer { close(fd) }
        var address = sockaddr_in()
        address.sin_family = sa_family_t(AF_INET)
        address.sin_addr.s_addr = inet_addr("127.0.0.1")
        address.sin_port = UInt16(port).bigEndian
        return withUnsafePointer(to: &address) { pointer in
            pointer.withMemoryRebound(to: sockaddr.self, capacity: 1) { bind(fd, $0, socklen_t(MemoryLayout<sockaddr_in>.size)) == 0 }
        }
    }
}

// The software key devices the vault benchmark signs with: a swtpm (TPM 2.0 simulator) on
// loopback and a SoftHSM2 token, each in its own temporary folder, started by the benchmark
// and always torn down by it. A missing binary is not an error: the provider is skipped with
// the reason printed (a CI machine without them still runs every other benchmark).
#if canImport(Glibc)
import Glibc
#endif
import Drivers
import TestHarness

/// Why a provider was skipped (printed, never fatal).
struct VaultSkip: Error, CustomStringConvertible {
    let description: String
    init(_ description: String) { self.description = description }
}

/// swtpm on two free loopback ports (commands P, control P+1), state in a private folder,
/// started with startup-clear so the TPM answers at once.
final class BenchSoftwareTPM {
    let folder: String
    let port: Int32
    private var process: AgentProcess?

    /// The TCTI string for TPM2KeyVault.
    var tcti: String { "swtpm:host=127.0.0.1,port=\(port)" }

    init() throws {
        guard let binary = (["/usr/bin/swtpm", "/usr/local/bin/swtpm"] as [String]).first(where: { access($0, X_OK) == 0 }) else {
            throw VaultSkip("swtpm not installed (apt-get install swtpm swtpm-tools)")
        }
        folder = TestFolders.make(prefix: "opencarkey-bench-swtpm")
        var lastLog = ""
        for _ in 0..<5 {
            guard let port = Self.freePortPair() else { continue }
            let process = try AgentProcess(binary, [
                "socket", "--tpm2",
                "--server", "type=tcp,port=\(port),bindaddr=127.0.0.1",
                "--ctrl", "type=tcp,port=\(port + 1),bindaddr=127.0.0.1",
                "--tpmstate", "dir=\(folder)",
                "--flags", "not-need-init,startup-clear",
            ])
            if process.wait(timeoutSeconds: 10, until: { MosquittoBroker.canConnect(port: port + 1) }) {
                self.port = port
                self.process = process
                return
            }
            lastLog = process.stderrTail
            _ = process.stop(signal: SIGKILL, timeoutSeconds: 2)
        }
        TestFolders.remove(folder)
        throw VaultSkip("swtpm did not start: \(lastLog)")
    }

    deinit { stop() }

    func stop() {
        if let process { _ = process.stop(signal: SIGKILL, timeoutSeconds: 5) }
        process = nil
        TestFolders.remove(folder)
    }

    /// A free port P whose neighbour P+1 is free too (swtpm's control channel).
    private static func freePortPair() -> Int32? {
        for _ in 0..<20 {
            guard let port = try? MosquittoBroker.freeLoopbackPort() else { continue }
            if port < 65535, isFree(port + 1) { return port }
        }
        return nil
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

/// A fresh SoftHSM2 token in a private folder. SoftHSM reads SOFTHSM2_CONF at C_Initialize,
/// so the variable is set for this process before the vault loads the module, and cleared
/// again by `remove` (agents later benchmarks spawn must not inherit it).
final class BenchSoftHSMToken {
    static let modulePath = "/usr/lib/softhsm/libsofthsm2.so"
    let folder: String
    let label = "carkey-bench"
    /// A throwaway PIN for a throwaway token; never printed.
    let pin = Array("246810".utf8)

    init() throws {
        guard let utility = (["/usr/bin/softhsm2-util", "/usr/local/bin/softhsm2-util"] as [String]).first(where: { access($0, X_OK) == 0 }),
              access(Self.modulePath, R_OK) == 0 else {
            throw VaultSkip("SoftHSM2 not installed (softhsm2-util, \(Self.modulePath)): apt-get install softhsm2")
        }
        folder = TestFolders.make(prefix: "opencarkey-bench-softhsm")
        let config = folder + "/softhsm2.conf"
        let tokens = folder + "/tokens"
        do {
            guard mkdir(tokens, 0o700) == 0 else { throw VaultSkip("mkdir \(tokens): errno \(errno)") }
            try Files.writeAtomically(Array("""
                directories.tokendir = \(tokens)
                objectstore.backend = file
                log.level = ERROR
                slots.removable = false

                """.utf8), to: config)
            setenv("SOFTHSM2_CONF", config, 1)
            try Self.runToCompletion([utility, "--init-token", "--free", "--label", label,
                                      "--so-pin", "13579246", "--pin", String(decoding: pin, as: UTF8.self)])
        } catch {
            remove()
            throw error
        }
    }

    func remove() {
        unsetenv("SOFTHSM2_CONF")
        TestFolders.remove(folder)
    }

    /// Runs a short command (output kept in its AgentProcess folder) and waits for it; throws
    /// VaultSkip unless it exits 0.
    private static func runToCompletion(_ arguments: [String]) throws {
        let process = try AgentProcess(arguments[0], Array(arguments.dropFirst()))
        guard process.wait(timeoutSeconds: 30, until: { !process.isRunning }) else {
            _ = process.stop(signal: SIGKILL, timeoutSeconds: 2)
            throw VaultSkip("\(arguments[0]) \(arguments[1]) did not finish in 30 s")
        }
        let status = process.stop(signal: SIGKILL, timeoutSeconds: 2)
        guard status == 0 else {
            throw VaultSkip("\(arguments[0]) \(arguments[1]) failed (status \(status.map(String.init) ?? "?")): \(process.stderrTail)")
        }
    }
}

// A real mosquitto broker on a free loopback port, started and stopped by tests and benchmarks.
#if canImport(Glibc)
import Glibc
#endif

public final class MosquittoBroker {
    public let port: Int32
    public let folder: String
    public private(set) var pid: pid_t = 0
    private let aclRules: String?
    /// Set when the listener speaks TLS (client certificates required).
    public let pki: TestPKI?

    /// `aclRules`: mosquitto acl_file content (e.g. "topic write vehicles/+/status"), or nil.
    /// `tls`: a TLS 1.2+ listener that requires a client certificate signed by a fresh test CA.
    public init(aclRules: String? = nil, tls: Bool = false) throws {
        port = try Self.freeLoopbackPort()
        var template = Array("/tmp/opencarkey-broker-XXXXXX".utf8CString)
        folder = String(cString: mkdtemp(&template)!)
        self.aclRules = aclRules
        var config = """
            listener \(port) 127.0.0.1
            allow_anonymous true
            set_tcp_nodelay true
            persistence true
            persistence_location \(folder)/
            autosave_interval 1
            max_queued_messages 100000
            log_dest file \(folder)/broker.log
            """
        // Started as root, mosquitto drops to user "mosquitto", which cannot use our 0700
        // temporary folder: keep the test's own identity instead.
        if geteuid() == 0 { config += "\nuser root" }
        if tls {
            let pki = try TestPKI(folder: folder + "/pki", serverName: "127.0.0.1", clientName: "OCK-SIM-0001")
            self.pki = pki
            config += """

                cafile \(pki.caFile)
                certfile \(pki.serverCertificate)
                keyfile \(pki.serverKey)
                require_certificate true
                use_identity_as_username true
                tls_version tlsv1.2
                """
        } else {
            pki = nil
        }
        if let aclRules {
            try Self.write(aclRules + "\n", to: folder + "/acl")
            config += "\nacl_file \(folder)/acl"
        }
        try Self.write(config + "\n", to: folder + "/mosquitto.conf")
    }

    deinit {
        stop()
        _ = system("rm -rf '\(folder)'")
    }

    public var url: String { "\(pki == nil ? "mqtt" : "mqtts")://127.0.0.1:\(port)" }

    /// Starts the broker and waits until it accepts TCP connections (at most 5 s).
    public func start() throws {
        guard pid == 0 else { return }
        let candidates: [String] = ["/usr/sbin/mosquitto", "/usr/bin/mosquitto"]
        let path = candidates.first { access($0, X_OK) == 0 }
        guard let path else { throw BrokerError.notInstalled }
        let argv: [UnsafeMutablePointer<CChar>?] = [strdup(path), strdup("-c"), strdup(folder + "/mosquitto.conf"), nil]
        defer { argv.forEach { free($0) } }
        var child: pid_t = 0
        guard posix_spawn(&child, path, nil, nil, argv, environ) == 0 else { throw BrokerError.spawnFailed }
        pid = child
        for _ in 0..<100 {
            if Self.canConnect(port: port) { return }
            usleep(50_000)
        }
        let log = (try? String(decoding: Self.readFile(folder + "/broker.log"), as: UTF8.self)) ?? "no log"
        throw BrokerError.notListening(port, log: log)
    }

    static func readFile(_ path: String) throws -> [UInt8] {
        guard let handle = fopen(path, "rb") else { throw BrokerError.spawnFailed }
        defer { fclose(handle) }
        var bytes = [UInt8](), chunk = [UInt8](repeating: 0, count: 4096)
        while true {
            let n = fread(&chunk, 1, chunk.count, handle)
            if n <= 0 { return bytes }
            bytes += chunk[0..<n]
        }
    }

    /// SIGTERM (clean: the broker saves its persistence file) or SIGKILL.
    public func stop(signal: Int32 = SIGTERM) {
        guard pid != 0 else { return }
        kill(pid, signal)
        var status: Int32 = 0
        waitpid(pid, &status, 0)
        pid = 0
    }

    public enum BrokerError: Error { case notInstalled, spawnFailed, notListening(Int32, log: String) }

    public static func freeLoopbackPort() throws -> Int32 {
        let fd = socket(AF_INET, Int32(SOCK_STREAM.rawValue), 0)
        defer { close(fd) }
        var address = sockaddr_in()
        address.sin_family = sa_family_t(AF_INET)
        address.sin_addr.s_addr = inet_addr("127.0.0.1")
        address.sin_port = 0
        var length = socklen_t(MemoryLayout<sockaddr_in>.size)
        let bound = withUnsafeMutablePointer(to: &address) { pointer in
            pointer.withMemoryRebound(to: sockaddr.self, capacity: 1) { bind(fd, $0, length) == 0 && getsockname(fd, $0, &length) == 0 }
        }
        guard bound else { throw BrokerError.spawnFailed }
        return Int32(UInt16(bigEndian: address.sin_port))
    }

    public static func canConnect(port: Int32) -> Bool {
        let fd = socket(AF_INET, Int32(SOCK_STREAM.rawValue), 0)
        defer { close(fd) }
        var address = sockaddr_in()
        address.sin_family = sa_family_t(AF_INET)
        address.sin_addr.s_addr = inet_addr("127.0.0.1")
        address.sin_port = UInt16(port).bigEndian
        return withUnsafePointer(to: &address) { pointer in
            pointer.withMemoryRebound(to: sockaddr.self, capacity: 1) { connect(fd, $0, socklen_t(MemoryLayout<sockaddr_in>.size)) == 0 }
        }
    }

    static func write(_ text: String, to path: String) throws {
        guard let handle = fopen(path, "w") else { throw BrokerError.spawnFailed }
        fputs(text, handle)
        fclose(handle)
    }
}

// A private ejabberd (mod_mqtt, MQTT 5) for tests: one node or a cluster of several on
// loopback, each with its own folder, ports, node name; one cookie and one private epmd per
// cluster. Never touches /etc/ejabberd, /var/lib/ejabberd or port 4369, and always tears down
// (stop() and deinit; VMs left by a crashed test process are killed by the next cluster).
#if canImport(Glibc)
import Glibc
#endif

public final class EjabberdCluster {
    public static let controlPath = "/usr/sbin/ejabberdctl"
    public static let defaultBackendUser = "backend"
    /// Node names are "ock-<test pid>-<cluster>-<index>@127.0.0.1".
    static let nodePrefix = "ock-"
    /// argv[0] of our epmd: "epmd-ock-<test pid>" (so strays can be found).
    static let epmdTag = "epmd-ock-"
    /// Run folders are /tmp/opencarkey-ejabberd-<test pid>-XXXXXX (so strays can be found).
    static let folderPrefix = "opencarkey-ejabberd-"

    public enum Failure: Error, CustomStringConvertible {
        case notInstalled(String)
        case command(String, status: Int32, output: String)
        case nodeExited(String, status: Int32, log: String)
        case notListening(String, log: String)
        case notJoined(String, seen: [String])
        case epmd(String)

        public var description: String {
            switch self {
            case .notInstalled(let why): return "ejabberd is not usable here: \(why)"
            case .command(let name, let status, let output): return "ejabberdctl \(name) failed (\(status)): \(output)"
            case .nodeExited(let node, let status, let log): return "ejabberd node \(node) exited (\(status)):\n\(log)"
            case .notListening(let node, let log): return "ejabberd node \(node) did not listen in time:\n\(log)"
            case .notJoined(let node, let seen): return "ejabberd node \(node) did not join its cluster (running: \(seen))"
            case .epmd(let why): return "private epmd: \(why)"
            }
        }
    }

    /// ejabberdctl and erl are installed, the ejabberd user exists and we are root (ejabberdctl
    /// runs the VM as that user through su).
    public static var isInstalled: Bool { unusableReason == nil }

    static var unusableReason: String? {
        if access(controlPath, X_OK) != 0 { return "\(controlPath) missing" }
        if access(epmdPath, X_OK) != 0 { return "\(epmdPath) missing" }
        if getpwnam("ejabberd") == nil { return "no user ejabberd" }
        if geteuid() != 0 { return "must run as root (ejabberdctl switches to user ejabberd)" }
        return nil
    }

    static let epmdPath = "/usr/bin/epmd"
    nonisolated(unsafe) private static var serial = 0

    public let nodes: [EjabberdNode]
    /// CA + server certificate (+ a default client, CN OCK-SIM-0001); `pki.clientCertificate(commonName:)` mints more.
    public let pki: TestPKI
    public let folder: String
    public let backendUser = EjabberdCluster.defaultBackendUser
    public let backendPassword: String
    public let epmdPort: Int32
    private let cookie: String
    private var epmdPID: pid_t = 0
    private var started = false
    private var stopped = false

    /// `sessionExpiry`: mod_mqtt's cap on the session expiry a client asks for ("1 hour", "5 minutes").
    /// `aclRules`: topic access (`.open`, `.perClientID()` or your own rules).
    public init(nodes count: Int = 1, sessionExpiry: String = "1 hour", aclRules: EjabberdAccess = .open) throws {
        if let why = Self.unusableReason { throw Failure.notInstalled(why) }
        EjabberdProcesses.killStrays()
        Self.serial += 1
        folder = TestFolders.make(prefix: "\(Self.folderPrefix)\(getpid())")
        do {
            pki = try TestPKI(folder: folder + "/pki", serverName: "127.0.0.1", clientName: "OCK-SIM-0001")
            let pem = (ProcessStats.read(pki.serverCertificate) ?? "") + (ProcessStats.read(pki.serverKey) ?? "")
            try MosquittoBroker.write(pem, to: folder + "/pki/server.pem")
            chmod(folder + "/pki/server.pem", 0o600)
            epmdPort = try MosquittoBroker.freeLoopbackPort()
            cookie = Self.randomToken(24)
            backendPassword = Self.randomToken(16)
            var made: [EjabberdNode] = []
            for index in 0..<max(1, count) {
                let node = try EjabberdNode(name: "\(Self.nodePrefix)\(getpid())-\(Self.serial)-\(index)@127.0.0.1",
                                            folder: folder + "/node\(index)")
                let config = EjabberdConfig(mqttPort: node.mqttPort, mqttsPort: node.mqttsPort,
                                            certificateFile: folder + "/pki/server.pem", caFile: pki.caFile,
                                            sessionExpiry: sessionExpiry, access: aclRules)
                try MosquittoBroker.write(config.yaml, to: node.folder + "/ejabberd.yml")
                try MosquittoBroker.write(EjabberdConfig.controlConfig(node: node.name, cookie: cookie, epmdPort: epmdPort,
                                                                       folder: node.folder) + "\n",
                                          to: node.folder + "/ejabberdctl.cfg")
                // Resolve names like the packaged inetrc does, without /etc/ejabberd.
                try MosquittoBroker.write("{lookup,[\"file\",\"native\"]}.\n{host,{127,0,0,1}, [\"localhost\"]}.\n",
                                          to: node.folder + "/inetrc")
                made.append(node)
            }
            nodes = made
        } catch {
            TestFolders.remove(folder)
            throw error
        }
        for node in nodes { node.peers = { [weak self] in self?.nodes ?? [] } }
        // The VM runs as user ejabberd: it must own (and be able to reach) the whole run folder.
        guard system("chown -R ejabberd:ejabberd '\(folder)'") == 0 else {
            TestFolders.remove(folder)
            throw Failure.notInstalled("chown to ejabberd failed")
        }
    }

    deinit { stop() }

    /// All nodes up, the others joined to node 0 (join_cluster), listening; the back-end user registered.
    public func start() throws {
        guard !started else { return }
        started = true
        try startEpmd()
        // Boot in parallel (~2-7 s each), then join one by one.
        for node in nodes { try node.launch() }
        for node in nodes { try node.waitListening() }
        for node in nodes.dropFirst() {
            try node.control(["join_cluster", nodes[0].name])
            // join_cluster restarts ejabberd on the joining node: wait for its listeners again.
            try node.waitListening()
        }
        if nodes.count > 1 {
            let expected = Set(nodes.map(\.name))
            let deadline = Monotonic.seconds() + 60
            var seen: [String] = []
            while Monotonic.seconds() < deadline {
                seen = nodes[0].runningClusterNodes()
                if expected.isSubset(of: Set(seen)) { break }
                usleep(300_000)
            }
            guard expected.isSubset(of: Set(seen)) else { throw Failure.notJoined(nodes[0].name, seen: seen) }
        }
        try register(user: backendUser, password: backendPassword)
    }

    /// A back-end user (user name + password on the plain listener), known on every node.
    public func register(user: String, password: String) throws {
        try nodes[0].control(["register", user, "localhost", password])
    }

    /// Every node down (SIGKILL: the folder goes anyway), the private epmd killed, the folder
    /// removed. Idempotent.
    public func stop() {
        guard !stopped else { return }
        stopped = true
        for node in nodes { node.kill9() }
        if epmdPID != 0 {
            kill(epmdPID, SIGKILL)
            _ = EjabberdProcesses.waitExit(epmdPID, timeoutSeconds: 5)
            epmdPID = 0
        }
        TestFolders.remove(folder)
    }

    /// Our own epmd on a free loopback port, in the foreground so we can kill and reap it.
    private func startEpmd() throws {
        epmdPID = try EjabberdProcesses.spawn(Self.epmdPath, ["-port", String(epmdPort), "-address", "127.0.0.1"],
                                              argv0: "\(Self.epmdTag)\(getpid())", output: folder + "/epmd.log")
        let deadline = Monotonic.seconds() + 10
        while Monotonic.seconds() < deadline {
            if MosquittoBroker.canConnect(port: epmdPort) { return }
            if let status = EjabberdProcesses.waitExit(epmdPID, timeoutSeconds: 0) {
                epmdPID = 0
                throw Failure.epmd("exited with \(status): \(ProcessStats.read(folder + "/epmd.log") ?? "")")
            }
            usleep(20_000)
        }
        throw Failure.epmd("not listening on \(epmdPort)")
    }

    private static func randomToken(_ length: Int) -> String {
        let alphabet = Array("abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789")
        return String((0..<length).map { _ in alphabet.randomElement()! })
    }
}

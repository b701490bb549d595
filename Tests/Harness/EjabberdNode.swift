// One ejabberd node of a test cluster: its own config, spool and log folder, node name and
// loopback ports. Started with `ejabberdctl foreground` (which runs the VM as user ejabberd
// through su) so the harness owns the process and can always reap it.
#if canImport(Glibc)
import Glibc
#endif

public final class EjabberdNode {
    /// Erlang node name, e.g. "ock-4242-1-0@127.0.0.1".
    public let name: String
    /// Plain MQTT listener (loopback). Only user name + password clients can log in here.
    public let mqttPort: Int32
    /// TLS listener that verifies client certificates (cars: CN = client id, empty password).
    public let mqttsPort: Int32
    /// config, spool/ and logs/ of this node.
    public let folder: String

    public var url: String { "mqtt://127.0.0.1:\(mqttPort)" }
    public var tlsURL: String { "mqtts://127.0.0.1:\(mqttsPort)" }

    /// The `ejabberdctl foreground` script we spawned (bash -> su -> sh -> beam.smp).
    private var launcher: pid_t = 0
    private var beamPID: pid_t?
    /// Set by the cluster: the other members a restarted node must see again before it counts as up.
    var peers: () -> [EjabberdNode] = { [] }

    init(name: String, folder: String) throws {
        self.name = name
        self.folder = folder
        mqttPort = try MosquittoBroker.freeLoopbackPort()
        var other = try MosquittoBroker.freeLoopbackPort()
        while other == mqttPort { other = try MosquittoBroker.freeLoopbackPort() }
        mqttsPort = other
        mkdir(folder, 0o700)
        mkdir(folder + "/spool", 0o700)
        mkdir(folder + "/logs", 0o700)
        mkdir(folder + "/contrib", 0o700)
    }

    deinit { kill9() }

    /// The node's beam.smp pid while it runs.
    public var osPID: pid_t? {
        guard let pid = beamPID, EjabberdProcesses.isAlive(pid) else { return nil }
        return pid
    }

    /// VmRSS of the VM in KiB.
    public func rssKB() -> Int? {
        guard let pid = osPID, let status = ProcessStats.read("/proc/\(pid)/status") else { return nil }
        return ProcessStats.field(status, "VmRSS:")
    }

    /// The log ejabberd writes (for failure messages).
    public var logTail: String {
        let text = (ProcessStats.read(folder + "/logs/ejabberd.log") ?? "") + (ProcessStats.read(folder + "/console.log") ?? "")
        return String(text.suffix(3000))
    }

    var controlArguments: [String] {
        ["-c", folder + "/ejabberdctl.cfg", "-d", folder, "-f", folder + "/ejabberd.yml",
         "-s", folder + "/spool", "-l", folder + "/logs"]
    }

    /// Runs `ejabberdctl ARGS` against this node (a short-lived hidden Erlang node).
    @discardableResult
    func control(_ arguments: [String], timeoutSeconds: Double = 60) throws -> String {
        let result = try EjabberdProcesses.run(EjabberdCluster.controlPath, controlArguments + arguments, scratch: folder,
                                               timeoutSeconds: timeoutSeconds)
        guard result.status == 0 else {
            throw EjabberdCluster.Failure.command(arguments.first ?? "", status: result.status, output: result.output)
        }
        return result.output
    }

    /// Spawns the VM without waiting.
    func launch() throws {
        guard osPID == nil else { return }
        launcher = try EjabberdProcesses.spawn(EjabberdCluster.controlPath, controlArguments + ["foreground"],
                                               output: folder + "/console.log")
    }

    /// Waits until the node accepts MQTT connections (and records its VM's pid).
    func waitListening(timeoutSeconds: Double = 90) throws {
        let deadline = Monotonic.seconds() + timeoutSeconds
        while Monotonic.seconds() < deadline {
            if MosquittoBroker.canConnect(port: mqttPort) && MosquittoBroker.canConnect(port: mqttsPort) {
                beamPID = EjabberdProcesses.beam(named: name)
                if beamPID != nil { return }
            }
            if launcher != 0, let status = EjabberdProcesses.waitExit(launcher, timeoutSeconds: 0) {
                launcher = 0
                throw EjabberdCluster.Failure.nodeExited(name, status: status, log: logTail)
            }
            usleep(100_000)
        }
        throw EjabberdCluster.Failure.notListening(name, log: logTail)
    }

    /// The nodes this node's mnesia is running with (ejabberdctl list_cluster).
    func runningClusterNodes() -> [String] {
        guard let output = try? control(["list_cluster"], timeoutSeconds: 30) else { return [] }
        return output.split(separator: "\n").map { $0.trimmingCharacters(in: "' ") }
    }

    /// SIGKILL the VM (no clean stop: sessions living here are lost, no wills are sent) and
    /// wait until it and the script around it are gone.
    public func kill9() {
        if let pid = beamPID ?? EjabberdProcesses.beam(named: name) {
            kill(pid, SIGKILL)
            let deadline = Monotonic.seconds() + 10
            while EjabberdProcesses.isAlive(pid) && Monotonic.seconds() < deadline { usleep(20_000) }
        }
        beamPID = nil
        if launcher != 0 {
            if EjabberdProcesses.waitExit(launcher, timeoutSeconds: 10) == nil {
                kill(launcher, SIGKILL)
                _ = EjabberdProcesses.waitExit(launcher, timeoutSeconds: 5)
            }
            launcher = 0
        }
    }

    /// Starts the node again from its spool; returns once it listens and, in a cluster, runs
    /// with every other member that is up (a restarted node rejoins by itself).
    public func restart() throws {
        try launch()
        try waitListening()
        let expected = Set([name] + peers().filter { $0 !== self && $0.osPID != nil }.map(\.name))
        guard expected.count > 1 else { return }
        let deadline = Monotonic.seconds() + 60
        var seen: [String] = []
        while Monotonic.seconds() < deadline {
            seen = runningClusterNodes()
            if expected.isSubset(of: Set(seen)) { return }
            usleep(500_000)
        }
        throw EjabberdCluster.Failure.notJoined(name, seen: seen)
    }
}

private extension Substring {
    func trimmingCharacters(in set: String) -> String {
        String(drop { set.contains($0) }.reversed().drop { set.contains($0) }.reversed())
    }
}

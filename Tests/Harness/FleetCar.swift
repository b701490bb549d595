// One car of a fleet run: a real `carkey-agent run --simulate` with its own state directory
// and vehicle ID (which is also its MQTT client ID), and what its log says about the cloud
// link. The process is killed when the car is released (AgentProcess), the folder removed.
#if canImport(Glibc)
import Glibc
#endif
import Drivers

public final class FleetCar {
    public let index: Int
    public let vehicleID: String
    /// Holds the state directory and any per-car files (TLS certificate and key).
    public let folder: String
    public var stateDirectory: String { folder + "/state" }
    public var controlSocket: String { stateDirectory + "/control.sock" }
    public var linkSocket: String { stateDirectory + "/ble.sock" }
    public private(set) var process: AgentProcess?
    /// Monotonic seconds when the process was spawned.
    public private(set) var spawnedAt = 0.0

    public init(index: Int, vehicleID: String) {
        self.index = index
        self.vehicleID = vehicleID
        folder = TestFolders.make(prefix: "opencarkey-fleet-car")
    }

    deinit {
        process = nil  // AgentProcess.deinit: SIGKILL and reap
        TestFolders.remove(folder)
    }

    /// Spawns the agent: one `--mqtt` per URL (the agent fails over between them when it
    /// supports more than one), plus `extra` (TLS files).
    /// `--clock-sync yes`: signed remote commands carry an issue time the car must trust.
    /// `--audit-routine-per-minute`: every status session gets its own event rows, so each
    /// phone session is an event whose way to the back end can be timed.
    public func start(urls: [String], extra: [String] = []) throws {
        precondition(process == nil, "one agent per car")
        let arguments = ["run", "--simulate", "--state-dir", stateDirectory, "--vehicle-id", vehicleID,
                         "--clock-sync", "yes", "--audit-routine-per-minute", "100000"]
            + urls.flatMap { ["--mqtt", $0] } + extra
        spawnedAt = Monotonic.seconds()
        process = try AgentProcess("carkey-agent", arguments)
    }

    /// The control socket answers (the agent finished starting).
    public var isServing: Bool {
        guard let process, process.isRunning else { return false }
        return access(controlSocket, F_OK) == 0 && process.stderr.contains("control socket")
    }

    public var isRunning: Bool { process?.isRunning ?? false }

    public var stderr: String { process?.stderr ?? "" }

    /// "cloud: connected" lines so far: one per (re)connection.
    public var connections: Int { FleetText.count("cloud: connected", in: stderr) }
    /// "cloud: connection lost" lines so far.
    public var losses: Int { FleetText.count("cloud: connection lost", in: stderr) }

    /// SIGKILL, reaped.
    public func kill() { process?.stop(signal: SIGKILL, timeoutSeconds: 2) }

    /// The car's whole event log, read beside the running agent (WAL: a second reader is fine).
    public func eventLog() throws -> [StoredEvent] {
        try CarStore.open(stateDirectory: stateDirectory).events(since: 0, limit: 10_000_000)
    }

    /// Resident memory (KiB) and CPU (ms, user + system) of the agent, nil once it is gone.
    public var sample: ProcessSample? { process.flatMap { ProcessStats.sample($0.pid) } }
}

/// Substring counting without Foundation.
public enum FleetText {
    public static func count(_ needle: String, in text: String) -> Int {
        let pattern = Array(needle.utf8), bytes = Array(text.utf8)
        guard !pattern.isEmpty, bytes.count >= pattern.count else { return 0 }
        var found = 0, index = 0
        while index <= bytes.count - pattern.count {
            if bytes[index] == pattern[0] && bytes[index..<(index + pattern.count)].elementsEqual(pattern) {
                found += 1
                index += pattern.count
            } else {
                index += 1
            }
        }
        return found
    }
}

// One observation of a running agent under load: what /proc says about it, how many phone
// visits were done, how big its store is and how many events still wait in its outbox.
#if canImport(Glibc)
import Glibc
#endif
import Drivers

public struct AgentObservation: Sendable {
    /// Monotonic seconds since the run started.
    public var elapsed: Double
    public var sessions: Int
    public var process: ProcessSample
    /// carkey.db plus its WAL.
    public var databaseBytes: Int
    /// Rows waiting for the broker's acknowledgement (-1 when the read failed).
    public var outboxDepth: Int
    /// CPU of the phone threads (their own thread clocks): the same-run reference that tells a
    /// busier machine (both slow down) from the agent's own cost creeping (only it grows).
    public var phonesCPUMillis: Int

    public init(elapsed: Double, sessions: Int, process: ProcessSample, databaseBytes: Int, outboxDepth: Int, phonesCPUMillis: Int = 0) {
        self.phonesCPUMillis = phonesCPUMillis
        self.elapsed = elapsed
        self.sessions = sessions
        self.process = process
        self.databaseBytes = databaseBytes
        self.outboxDepth = outboxDepth
    }
}

public final class AgentSampler {
    public let pid: pid_t
    public let stateDirectory: String
    private var store: CarStore?

    public init(pid: pid_t, stateDirectory: String) {
        self.pid = pid
        self.stateDirectory = stateDirectory
    }

    /// nil when the process is gone.
    /// `phonesCPUMillis`: the phone threads' CPU so far (PhoneLoadGenerator.phonesCPUMillis).
    public func observe(elapsed: Double, sessions: Int, phonesCPUMillis: Int) -> AgentObservation? {
        guard let process = ProcessStats.sample(pid) else { return nil }
        return AgentObservation(elapsed: elapsed, sessions: sessions, process: process,
                                databaseBytes: databaseBytes, outboxDepth: outboxDepth,
                                phonesCPUMillis: phonesCPUMillis)
    }

    public var databaseBytes: Int {
        let base = stateDirectory + "/" + StateDirectory.databaseFileName
        return Self.fileSize(base) + Self.fileSize(base + "-wal")
    }

    /// Read through a second connection (WAL lets it read beside the agent's writer).
    public var outboxDepth: Int {
        do {
            if store == nil { store = try CarStore.open(stateDirectory: stateDirectory) }
            return try store!.read { try $0.outboxDepth() }
        } catch {
            return -1
        }
    }

    public func lastEventSequence() throws -> Int64 {
        if store == nil { store = try CarStore.open(stateDirectory: stateDirectory) }
        return try store!.lastEventSequence()
    }

    static func fileSize(_ path: String) -> Int {
        var info = stat()
        return stat(path, &info) == 0 ? Int(info.st_size) : 0
    }
}

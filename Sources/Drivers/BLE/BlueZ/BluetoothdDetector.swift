// bluetoothd and this gateway cannot share an adapter: the most recently created CID-4
// listener gets every new ATT connection, and bluetoothd's power cycles remove our advertising
// instance. So the gateway refuses to start while it runs, with the fix in the message.
#if canImport(Glibc)
import Glibc
#endif

public enum BluetoothdConflict: Error, Equatable, Sendable, CustomStringConvertible {
    case running(pid: Int32)

    public var description: String {
        switch self {
        case .running(let pid):
            return "bluetoothd is running (pid \(pid)): it takes over new ATT connections and removes our "
                + "advertising when it power-cycles the adapter. Stop it with `systemctl disable --now bluetooth`."
        }
    }
}

public struct BluetoothdDetector: Sendable {
    /// The proc mount; a test points it at a fake tree of <pid>/comm files.
    public let procRoot: String

    public init(procRoot: String = "/proc") { self.procRoot = procRoot }

    /// The pid of a process named bluetoothd, if any (unreadable entries are skipped: processes
    /// come and go while we look).
    public func runningPID() -> Int32? {
        guard let directory = opendir(procRoot) else { return nil }
        defer { closedir(directory) }
        var found: Int32?
        while let entry = readdir(directory) {
            let name = DirectoryEntry.name(entry)
            guard let pid = Int32(name), pid > 0 else { continue }
            guard let comm = try? Files.read(procRoot + "/" + name + "/comm", limit: 64) else { continue }
            let command = String(decoding: comm, as: UTF8.self).split(separator: "\n").first.map(String.init) ?? ""
            if command == "bluetoothd" { found = min(found ?? pid, pid) }
        }
        return found
    }

    /// Throws when bluetoothd runs.
    public func check() throws(BluetoothdConflict) {
        if let pid = runningPID() { throw .running(pid: pid) }
    }
}

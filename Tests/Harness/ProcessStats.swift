// What /proc says about a process (or this one): resident memory, threads, open descriptors,
// CPU time and context switches summed over its threads. Long-run tests and benchmarks sample
// it to show that nothing grows with uptime and how often an idle process wakes.
#if canImport(Glibc)
import Glibc
#endif
import Drivers

public struct ProcessSample: Sendable, Equatable {
    /// Resident set size in bytes (VmRSS).
    public var residentBytes: Int
    public var threads: Int
    public var openDescriptors: Int
    /// User plus system CPU time of all threads, in clock ticks converted to milliseconds.
    public var cpuMillis: Int
    /// Voluntary context switches of all threads: each is a sleep that ended, i.e. a wake-up.
    public var voluntarySwitches: Int
    public var involuntarySwitches: Int
}

public enum ProcessStats {
    /// A sample of `pid` (0 = this process), or nil when it is gone.
    public static func sample(_ pid: pid_t = 0) -> ProcessSample? {
        let base = pid == 0 ? "/proc/self" : "/proc/\(pid)"
        guard let status = read(base + "/status") else { return nil }
        var sample = ProcessSample(residentBytes: field(status, "VmRSS:") * 1024, threads: field(status, "Threads:"),
                                   openDescriptors: count(base + "/fd"), cpuMillis: cpuMillis(base + "/stat"),
                                   voluntarySwitches: 0, involuntarySwitches: 0)
        // The process's own status counts only its main thread's switches: sum the tasks.
        for task in entries(base + "/task") {
            guard let text = read(base + "/task/\(task)/status") else { continue }
            sample.voluntarySwitches += field(text, "voluntary_ctxt_switches:")
            sample.involuntarySwitches += field(text, "nonvoluntary_ctxt_switches:")
        }
        return sample
    }

    /// The whole text of a small file (/proc, logs), nil when it cannot be read.
    public static func read(_ path: String) -> String? {
        guard let file = fopen(path, "r") else { return nil }
        defer { fclose(file) }
        var bytes = [UInt8]()
        var buffer = [UInt8](repeating: 0, count: 4096)
        while true {
            let n = fread(&buffer, 1, buffer.count, file)
            if n <= 0 { break }
            bytes += buffer[0..<n]
        }
        return String(decoding: bytes, as: UTF8.self)
    }

    /// The integer after `name` at the start of a line ("VmRSS:   1234 kB" -> 1234), 0 if absent.
    static func field(_ text: String, _ name: String) -> Int {
        for line in text.split(separator: "\n") where line.hasPrefix(name) {
            let digits = line.dropFirst(name.count).drop { $0 == " " || $0 == "\t" }.prefix { $0.isNumber }
            return Int(digits) ?? 0
        }
        return 0
    }

    /// utime + stime from /proc/PID/stat (fields 14 and 15, after the parenthesised name).
    static func cpuMillis(_ path: String) -> Int {
        guard let text = read(path), let close = text.lastIndex(of: ")") else { return 0 }
        let fields = text[text.index(after: close)...].split(separator: " ")
        // fields[0] is the state (field 3), so utime (14) is fields[11] and stime (15) fields[12].
        guard fields.count > 12, let user = Int(fields[11]), let system = Int(fields[12]) else { return 0 }
        let ticks = max(1, sysconf(Int32(_SC_CLK_TCK)))
        return (user + system) * 1000 / ticks
    }

    static func entries(_ path: String) -> [String] {
        guard let dir = opendir(path) else { return [] }
        defer { closedir(dir) }
        var names = [String]()
        while let entry = readdir(dir) {
            let name = DirectoryEntry.name(entry)
            if name != "." && name != ".." { names.append(name) }
        }
        return names
    }

    static func count(_ path: String) -> Int { entries(path).count }
}

// What an idle agent costs a board on a car battery: the release carkey-agent started with
// `run --simulate`, without and with `--mqtt` to a local broker, left alone to settle, then
// sampled from /proc over a window (ProcessStats): wake-ups per second (voluntary context
// switches of all its threads: each is a sleep that ended), CPU, resident memory, threads and
// descriptors, and the syncs it did meanwhile (its own `stats`, read outside the window so the
// request's wake-ups are not counted). Both the dynamic binary (next to carkey-bench) and the
// static one (build/static/carkey-agent from `make static`) when it exists; each line says
// which file ran and how the running process was linked (the dynamic loader in its maps or not).
#if canImport(Glibc)
import Glibc
#endif
import Drivers
import TestHarness

enum IdleAgentBench {
    /// Issue 9: at most 20 wake-ups/s idle with the cloud link on.
    static let targetWakeupsPerSecond = 20.0

    static func run(settleSeconds: Double = 3, windowSeconds: Double = 5) throws {
        let broker = try MosquittoBroker()
        try broker.start()
        defer { broker.stop() }
        let binaries = [("dynamic", dynamicBinary()), ("static", staticBinary())]
        for (expected, binary) in binaries {
            guard access(binary, X_OK) == 0 else {
                Bench.emit([
                    ("benchmark", "agent_idle"),
                    ("path", binary),
                    ("linkage", expected),
                    ("skipped", true),
                    ("reason", expected == "static" ? "not built: \(staticBuildHint)"
                                                    : "not built: make bench builds it (swift build -c release --product carkey-agent)"),
                ])
                continue
            }
            // A static binary left from older sources would report someone else's figures.
            let stale = expected == "static" && modified(binary) < modified(dynamicBinary())
            for cloud in [false, true] {
                try measure(binary: binary, brokerURL: cloud ? broker.url : nil, olderThanDynamic: stale,
                            settleSeconds: settleSeconds, windowSeconds: windowSeconds)
            }
        }
    }

    /// make bench does not build the static binary: cold it took 3.5 min here (2 shared cores),
    /// and with the default scratch path it replaces .build/release/carkey-agent, so the next
    /// dynamic build redoes the whole release tree.
    static let staticBuildHint = "run `make static SCRATCH=.build-static` (3.5 min cold here; its own scratch path keeps "
        + ".build/release dynamic), then make bench again"

    /// CARKEY_BENCH_AGENT, or carkey-agent next to this executable (same build configuration).
    static func dynamicBinary() -> String {
        if let path = getenv("CARKEY_BENCH_AGENT") { return String(cString: path) }
        var buffer = [CChar](repeating: 0, count: 4096)
        let length = readlink("/proc/self/exe", &buffer, buffer.count - 1)
        guard length > 0 else { return "carkey-agent" }
        let own = String(decoding: buffer[0..<length].map { UInt8(bitPattern: $0) }, as: UTF8.self)
        return own.split(separator: "/", omittingEmptySubsequences: false).dropLast().joined(separator: "/") + "/carkey-agent"
    }

    /// CARKEY_BENCH_STATIC_AGENT, or build/static/carkey-agent under the working directory
    /// (make bench runs from the repository root).
    static func staticBinary() -> String {
        if let path = getenv("CARKEY_BENCH_STATIC_AGENT") { return String(cString: path) }
        var buffer = [CChar](repeating: 0, count: 4096)
        guard getcwd(&buffer, buffer.count) != nil else { return "build/static/carkey-agent" }
        let cwd = String(decoding: buffer.prefix { $0 != 0 }.map { UInt8(bitPattern: $0) }, as: UTF8.self)
        return cwd + "/build/static/carkey-agent"
    }

    static func modified(_ path: String) -> Int {
        var info = stat()
        return stat(path, &info) == 0 ? info.st_mtim.tv_sec : 0
    }

    static func measure(binary: String, brokerURL: String?, olderThanDynamic: Bool, settleSeconds: Double,
                        windowSeconds: Double) throws {
        var template = Array("/tmp/carkey-bench-idle-XXXXXX".utf8CString)
        guard let made = mkdtemp(&template) else { throw Errno.current("mkdtemp") }
        let folder = String(cString: made)
        defer { _ = system("rm -rf '\(folder)'") }
        let agent = try SpawnedAgent(binary: binary, stateDirectory: folder + "/state",
                                     extra: brokerURL.map { ["--mqtt", $0] } ?? [])
        defer { agent.stop() }
        sleep(seconds: settleSeconds)
        let statsBefore = agent.stats()
        guard let first = ProcessStats.sample(agent.pid) else { throw SpawnedAgent.Failure(description: "agent exited while settling") }
        let clearedReferences = MemoryParts.clearReferences(agent.pid)
        let start = Bench.now()
        sleep(seconds: windowSeconds)
        guard let last = ProcessStats.sample(agent.pid) else { throw SpawnedAgent.Failure(description: "agent exited while idle") }
        let parts = MemoryParts.sample(agent.pid) ?? []
        let seconds = Double(Bench.now() - start) / 1e9
        let statsAfter = agent.stats()
        let linkage = agent.linkage
        let wakeups = Double(last.voluntarySwitches - first.voluntarySwitches) / seconds
        let syncs = statsAfter["syncs"].flatMap { after in statsBefore["syncs"].map { Int(after - $0) } } ?? -1
        Bench.emit([
            ("benchmark", "agent_idle"),
            ("path", binary),
            ("linkage", linkage),
            ("older_than_dynamic_binary", olderThanDynamic),
            ("cloud", brokerURL.map { "mqtt to a local mosquitto (\($0))" } ?? "off"),
            ("settle_s", settleSeconds),
            ("window_s", seconds),
            ("wakeups_per_sec", wakeups),
            ("involuntary_switches_per_sec", Double(last.involuntarySwitches - first.involuntarySwitches) / seconds),
            ("cpu_ms_per_sec", Double(last.cpuMillis - first.cpuMillis) / seconds),
            ("rss_mib", Double(last.residentBytes) / 1_048_576),
            ("threads", last.threads),
            ("fds", last.openDescriptors),
            ("syncs_in_window", syncs),
            ("outbox_depth", Int(statsAfter["outbox-depth"] ?? -1)),
            // -1 offline; 1 when the link was up at the end of the window (a down link would
            // make the wake-up figure mean something else).
            ("cloud_connected", Int(statsAfter["cloud-connected"] ?? -1)),
            ("target_wakeups_per_sec", targetWakeupsPerSecond),
            ("meets_target", wakeups <= targetWakeupsPerSecond),
        ])
        emitMemory(parts, binary: binary, linkage: linkage, cloud: brokerURL != nil, windowSeconds: seconds,
                   referencesCleared: clearedReferences)
    }

    /// Idle RSS target for the static agent with --mqtt (MiB).
    static let targetRSSMiB = 10.0

    /// Where the idle RSS is (MemoryParts): per part resident, anonymous-or-dirty and
    /// referenced-in-the-window KiB, and three totals: RSS, what the kernel cannot drop without
    /// swap (private dirty), and the working set of the idle window (referenced).
    static func emitMemory(_ parts: [MemoryPart], binary: String, linkage: String, cloud: Bool, windowSeconds: Double,
                           referencesCleared: Bool) {
        guard !parts.isEmpty else { return }
        var fields: [(String, Any)] = [
            ("benchmark", "agent_idle_memory"),
            ("path", binary),
            ("linkage", linkage),
            ("cloud", cloud ? "mqtt to a local mosquitto" : "off"),
            ("window_s", windowSeconds),
        ]
        for part in parts {
            let key = String(part.name.map { $0 == "-" ? "_" : $0 })
            fields += [("\(key)_rss_kib", part.residentKiB), ("\(key)_dirty_kib", part.dirtyKiB),
                       ("\(key)_referenced_kib", referencesCleared ? part.referencedKiB : -1)]
        }
        let rss = Double(parts.map(\.residentKiB).reduce(0, +)) / 1024
        let dirty = Double(parts.map(\.dirtyKiB).reduce(0, +)) / 1024
        let working = Double(parts.map(\.referencedKiB).reduce(0, +)) / 1024
        fields += [
            ("rss_mib", rss),
            ("private_dirty_mib", dirty),
            ("working_set_mib", referencesCleared ? working : -1),
            ("clean_executable_pages_mib", Double(parts.filter { ["code", "rodata", "data"].contains($0.name) }
                .map { $0.residentKiB - $0.dirtyKiB }.reduce(0, +)) / 1024),
            ("target_rss_mib", targetRSSMiB),
            ("meets_rss_target", rss <= targetRSSMiB),
        ]
        Bench.emit(fields)
    }

    /// A timer sleep for the whole interval (resumed after a signal).
    private static func sleep(seconds: Double) {
        var request = timespec(tv_sec: Int(seconds), tv_nsec: Int((seconds - Double(Int(seconds))) * 1e9))
        var left = timespec()
        while nanosleep(&request, &left) != 0 && errno == EINTR { request = left }
    }
}

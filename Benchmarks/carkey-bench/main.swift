// carkey-bench: benchmarks for `make bench`, one JSON object per line on stdout.
// Every figure is a ratio against a reference measured in the same run (direct OpenSSL in C,
// raw fdatasync, a fixed sync cost, mosquitto_pub), or a count from /proc or the agent's own
// counters (idle wake-ups, RSS), never an absolute time compared with a constant.
// `carkey-bench NAME...` runs only the named benchmarks (listed below, in order).
#if canImport(Glibc)
import Glibc
#endif

// One line per benchmark; add new ones here (name, what it runs).
let benchmarks: [(String, () throws -> Void)] = [
    ("ecdsa", { try ECDSAVerifyBench.run() }),
    ("handshake", { try HandshakeBench.run() }),
    ("vault", { try VaultBench.run() }),
    ("outbox", { try OutboxBench.run() }),
    ("idle", { try IdleAgentBench.run() }),
    ("cellular", { try CellularBillBench.run() }),
    ("agent", { try AgentPathBench.run() }),
    ("proximity", { ProximityBench.run() }),
    ("uwb", { try UWBDriverBench.run() }),
    ("remote", { try RemoteCommandBench.run() }),
    ("attack", { try PhoneLinkAttackBench.run() }),
    ("size", { try SizeBreakdown.run() }),
]

do {
    let selected = Set(CommandLine.arguments.dropFirst())
    if let unknown = selected.first(where: { name in !benchmarks.contains { $0.0 == name } }) {
        throw BenchUsage(name: unknown, known: benchmarks.map(\.0))
    }
    for (name, run) in benchmarks where selected.isEmpty || selected.contains(name) {
        try run()
    }
} catch {
    let line = Array("carkey-bench: \(error)\n".utf8)
    _ = write(2, line, line.count)
    exit(1)
}

struct BenchUsage: Error, CustomStringConvertible {
    let name: String
    let known: [String]
    var description: String { "unknown benchmark '\(name)' (known: \(known.joined(separator: ", ")))" }
}

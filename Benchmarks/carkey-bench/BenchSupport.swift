// Timing and output helpers shared by the benchmarks.
#if canImport(Glibc)
import Glibc
#endif

enum Bench {
    /// Monotonic nanoseconds (wall time: for anything that waits on disk or network).
    static func now() -> UInt64 {
        var ts = timespec()
        clock_gettime(CLOCK_MONOTONIC, &ts)
        return UInt64(ts.tv_sec) * 1_000_000_000 + UInt64(ts.tv_nsec)
    }

    /// CPU nanoseconds of the calling thread (CLOCK_THREAD_CPUTIME_ID): time another process
    /// takes from this core does not count, so CPU-bound ratios stay put on a shared machine.
    static func threadCPUNow() -> UInt64 {
        var ts = timespec()
        clock_gettime(CLOCK_THREAD_CPUTIME_ID, &ts)
        return UInt64(ts.tv_sec) * 1_000_000_000 + UInt64(ts.tv_nsec)
    }

    /// Runs `body` and returns wall seconds taken.
    static func seconds(_ body: () -> Void) -> Double {
        let start = now()
        body()
        return Double(now() - start) / 1e9
    }

    /// Runs `body` and returns this thread's CPU seconds taken.
    static func cpuSeconds(_ body: () -> Void) -> Double {
        let start = threadCPUNow()
        body()
        return Double(threadCPUNow() - start) / 1e9
    }

    /// The cost of one threadCPUNow() call (the smallest of many back-to-back pairs): what a
    /// region timed by a pair of calls carries on top of its own work.
    static func threadCPUClockOverheadNanos() -> UInt64 {
        var best = UInt64.max
        for _ in 0..<2000 {
            let a = threadCPUNow()
            let b = threadCPUNow()
            best = min(best, b - a)
        }
        return best
    }

    static func median(_ values: [Double]) -> Double {
        let sorted = values.sorted()
        guard !sorted.isEmpty else { return 0 }
        let mid = sorted.count / 2
        return sorted.count % 2 == 1 ? sorted[mid] : (sorted[mid - 1] + sorted[mid]) / 2
    }

    /// Prints one JSON object per line. Values are numbers, booleans or plain strings.
    static func emit(_ fields: [(String, Any)]) {
        let body = fields.map { key, value -> String in
            switch value {
            case let number as Double: return "\"\(key)\":\(format(number))"
            case let number as Int: return "\"\(key)\":\(number)"
            case let number as UInt64: return "\"\(key)\":\(number)"
            case let flag as Bool: return "\"\(key)\":\(flag)"
            default: return "\"\(key)\":\"\(escaped("\(value)"))\""
            }
        }.joined(separator: ",")
        print("{\(body)}")
        fflush(nil)
    }

    private static func format(_ value: Double) -> String {
        guard value.isFinite else { return "null" }
        let scaled = (value * 1000).rounded() / 1000
        return "\(scaled)"
    }

    private static func escaped(_ text: String) -> String {
        String(text.flatMap { character -> [Character] in
            switch character {
            case "\"": return ["\\", "\""]
            case "\\": return ["\\", "\\"]
            case "\n": return ["\\", "n"]
            default: return [character]
            }
        })
    }
}

/// Min and median of per-round figures (rates or ratios), as every benchmark reports them.
struct RoundFigures {
    private(set) var values: [Double] = []
    mutating func append(_ value: Double) { values.append(value) }
    var min: Double { values.min() ?? 0 }
    var max: Double { values.max() ?? 0 }
    var median: Double { Bench.median(values) }
}

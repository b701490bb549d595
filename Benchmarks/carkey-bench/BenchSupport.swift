// Timing and output helpers shared by the benchmarks.
#if canImport(Glibc)
import Glibc
#endif

enum Bench {
    /// Monotonic nanoseconds.
    static func now() -> UInt64 {
        var ts = timespec()
        clock_gettime(CLOCK_MONOTONIC, &ts)
        return UInt64(ts.tv_sec) * 1_000_000_000 + UInt64(ts.tv_nsec)
    }

    /// Runs `body` and returns seconds taken.
    static func seconds(_ body: () -> Void) -> Double {
        let start = now()
        body()
        return Double(now() - start) / 1e9
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
            case let flag as Bool: return "\"\(key)\":\(flag)"
            default: return "\"\(key)\":\"\(value)\""
            }
        }.joined(separator: ",")
        print("{\(body)}")
        fflush(nil)
    }

    private static func format(_ value: Double) -> String {
        let scaled = (value * 1000).rounded() / 1000
        return "\(scaled)"
    }
}

// Bounds that an instrumented build moves for reasons that are not the product's
// (scripts/sanitize.sh sets both variables; a plain `make test` sets neither, so every bound is
// the real one there).
#if canImport(Glibc)
import Glibc
#endif

public enum SanitizerAllowance {
    /// Extra resident memory: ASan's quarantine and allocator caches hold freed blocks, and TSan
    /// keeps shadow and history for every block (CARKEY_SANITIZER_RSS_SLACK_MIB).
    public static var rssSlackBytes: Int { value("CARKEY_SANITIZER_RSS_SLACK_MIB").map { $0 << 20 } ?? 0 }

    /// How much slower every instruction runs (CARKEY_SANITIZER_TIME_SCALE): a latency deadline
    /// that measures the car's design, such as "the owner gets a session within 1 s during an
    /// attack", is scaled by it; the behaviour asserted stays the same.
    public static var timeScale: UInt64 { value("CARKEY_SANITIZER_TIME_SCALE").map { UInt64(max(1, $0)) } ?? 1 }

    private static func value(_ name: String) -> Int? {
        getenv(name).flatMap { Int(String(cString: $0)) }
    }
}

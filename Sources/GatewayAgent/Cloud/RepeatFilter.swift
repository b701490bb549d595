// A car without network retries its broker forever (every 60 s at the backoff's cap): the
// log gets a line when the failure starts or its reason changes, and a count of the repeats
// when it ends, instead of a line a minute for the whole outage.

struct RepeatFilter: Sendable {
    private var current: String?
    private(set) var repeats = 0

    /// The line to log for this occurrence of `reason`, or nil when it repeats the last one.
    mutating func admit(_ reason: String) -> String? {
        guard reason != current else {
            repeats += 1
            return nil
        }
        let earlier = repeats
        current = reason
        repeats = 0
        return earlier > 0 ? "\(reason) (the previous failure repeated \(earlier) more times)" : reason
    }

    /// The condition ended (connected): how many repeats were not logged; starts afresh.
    mutating func end() -> Int {
        defer { current = nil; repeats = 0 }
        return repeats
    }
}

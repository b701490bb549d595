// How much the agent logs. Changeable at run time (`log level` on the console), so the current
// level is one process-wide atomic that every AgentLog reads.
import Synchronization

enum LogLevel: String, CaseIterable, Comparable, Sendable {
    case debug, info, warn, error

    static let expectation = "one of \"debug\", \"info\", \"warn\", \"error\""

    private var rank: Int { LogLevel.allCases.firstIndex(of: self) ?? 1 }
    static func < (lhs: LogLevel, rhs: LogLevel) -> Bool { lhs.rank < rhs.rank }

    private static let current = Atomic<Int>(1)

    /// The level in force; lines below it are dropped.
    static var threshold: LogLevel {
        get { allCases[max(0, min(allCases.count - 1, current.load(ordering: .relaxed)))] }
        set { current.store(newValue.rank, ordering: .relaxed) }
    }
}

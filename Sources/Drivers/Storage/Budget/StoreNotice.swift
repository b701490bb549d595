// What the store budget did that an operator should hear about: the agent logs each notice as
// one line. The events it writes for the same facts use the action names below.

public enum StoreNotice: Equatable, Sendable, CustomStringConvertible {
    /// The ballast file was deleted so that security writes (and start-up) have room.
    case reserveReleased(bytes: Int64, freeBytes: Int64?, why: String)
    case reserveCreated(bytes: Int64)
    case reserveNotCreated(bytes: Int64, reason: String)
    /// Less than the low-space mark is free: the database file stops growing.
    case diskFull(freeBytes: Int64)
    case diskSpaceBack(freeBytes: Int64)
    /// A pruning episode began (at most one notice per report interval).
    case pruningStarted(reason: String, usedBytes: Int64, budgetBytes: Int64, totals: PrunedTotals)
    /// Pages given back to the file system by incremental vacuum.
    case vacuumed(pages: Int64)

    /// The event actions (kind `storage`) for pruning and a full disk; both are kept longest.
    public static let pruneAction = EventAction.pruneEvents.rawValue
    public static let diskFullAction = EventAction.diskFull.rawValue

    public var description: String {
        switch self {
        case .reserveReleased(let bytes, let free, let why):
            return "disk full: released the \(Self.kib(bytes)) reserve (\(why); \(free.map(Self.kib) ?? "unknown") free before); "
                + "enrolled keys, revocations and access records keep working"
        case .reserveCreated(let bytes): return "reserve of \(Self.kib(bytes)) in place"
        case .reserveNotCreated(let bytes, let reason): return "reserve of \(Self.kib(bytes)) not created: \(reason)"
        case .diskFull(let free):
            return "the disk is full (\(Self.kib(free)) free): the database stops growing and prunes old events to make room"
        case .diskSpaceBack(let free): return "disk space is back (\(Self.kib(free)) free)"
        case .pruningStarted(let reason, let used, let budget, let totals):
            return "pruning events (\(reason): \(Self.kib(used)) in use, budget \(Self.kib(budget))); pruned so far: "
                + "\(totals.noise) noise, \(totals.ordinary) ordinary, \(totals.critical) critical, \(totals.unpublished) unpublished"
        case .vacuumed(let pages): return "gave \(pages) free pages back to the file system"
        }
    }

    static func kib(_ bytes: Int64) -> String { "\(bytes / 1024) KiB" }
}

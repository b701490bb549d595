// Keeps the store inside its budget while the agent runs, and makes room when a write meets a
// full disk or the page cap (SQLITE_FULL).
//
// The bound is hard: the writer connection's max_page_count is the budget, so the file cannot
// outgrow it between two maintenance rounds; a write that hits it gets SQLITE_FULL, the store
// prunes one round and retries (`makeRoom`). Freed pages go to SQLite's freelist and are
// reused by the next inserts, so a database that reached its budget stops growing without a
// VACUUM. Databases created by this code use auto_vacuum=INCREMENTAL, so a budget lowered
// later is also given back to the file system, a few hundred pages per round.
//
// Security-critical writes (keychain rows, the identity, access decisions, tamper findings)
// may go beyond both limits once the rest has been tried: the page cap is lifted by the
// reserve's size and the ballast file is deleted to give the disk that room.
#if canImport(Glibc)
import Glibc
#endif
import Synchronization

final class StoreSpace: Sendable {
    let budget: StoreBudget
    let reserve: StoreReserve
    /// Age pruning scans the oldest rows; once every ten minutes is plenty for day-long ages.
    static let ageCheckIntervalMillis: UInt64 = 600_000

    private struct State {
        /// Where the next batch of each slice starts, by size and by age (EventPruner.Batch).
        var cursors: [PruneSlice: Int64] = [:]
        var ageCursors: [PruneSlice: Int64] = [:]
        var diskFull = false
        /// The "disk full" event of the current episode is in the log (also for a start-up on
        /// a full disk, noticed before the store could write anything).
        var diskFullRecorded = false
        var lastReportMillis: UInt64?
        var lastAgeCheckMillis: UInt64?
        /// Notices raised inside a write (makeRoom), handed out by the next `maintain`.
        var pending: [StoreNotice] = []
        /// The page cap last asked for, so an unchanged one costs no PRAGMA each tick.
        var requestedCap: Int64?
    }
    private let state = Mutex(State())

    init(budget: StoreBudget, directory: StateDirectory) {
        self.budget = budget
        reserve = StoreReserve(directory: directory.path, bytes: budget.reserveBytes)
    }

    var diskFull: Bool { state.withLock { $0.diskFull } }

    // MARK: Start-up

    /// Before SQLite opens the file: on a full disk, release the reserve so that opening,
    /// migrating and the first writes have room; otherwise put the reserve in place.
    func prepareForStart() -> [StoreNotice] {
        guard let free = StoreReserve.freeBytes(in: reserve.directory) else { return [] }
        if free < budget.lowSpaceBytes {
            state.withLock { $0.diskFull = true }
            var notices = [StoreNotice.diskFull(freeBytes: free)]
            if reserve.release() {
                notices.append(.reserveReleased(bytes: reserve.bytes, freeBytes: free, why: "at start-up"))
            }
            return notices
        }
        return createReserveIfRoom(free: free)
    }

    /// The connection settings the budget needs: a WAL kept small by checkpoints and kept
    /// (with its index) from one run to the next, and the page cap. The WAL file is not
    /// truncated (no journal_size_limit): its allocated size is room a restart on a full
    /// disk reuses, since frames are rewritten from its start after each checkpoint.
    func configure(_ database: Database) throws {
        let pageSize = try usage(database).pageSize
        let walBytes = budget.walLimitBytes(pageSize: pageSize)
        try database.withoutTransaction { connection in
            try connection.execute("PRAGMA wal_autocheckpoint = \(walBytes / pageSize)")
        }
        try applyCap(database)
    }

    // MARK: Maintenance (the agent's housekeeping tick)

    /// One bounded round: disk space, the reserve, size and age pruning, vacuum.
    func maintain(_ store: CarStore, now: EventTime, nowMillis: UInt64) -> [StoreNotice] {
        var notices = state.withLock { state in
            defer { state.pending.removeAll() }
            return state.pending
        }
        if let free = StoreReserve.freeBytes(in: reserve.directory) {
            let (wasFull, entering, record) = state.withLock { state -> (Bool, Bool, Bool) in
                let was = state.diskFull
                if !was && free < budget.lowSpaceBytes { state.diskFull = true }
                if was && free >= budget.lowSpaceBytes + budget.reserveBytes { state.diskFull = false }
                if !state.diskFull { state.diskFullRecorded = false }
                return (was, state.diskFull && !was, state.diskFull && !state.diskFullRecorded)
            }
            if entering { notices.append(.diskFull(freeBytes: free)) }
            if record {
                // Through the store's own write path: the record of a full disk is worth the reserve.
                let written: ()? = try? store.write { transaction in
                    try transaction.appendEvent(store.storageEvent(action: .diskFull,
                                                                   detail: [("freeBytes", String(free))], result: "detected"))
                }
                if written != nil { state.withLock { $0.diskFullRecorded = true } }
            }
            if wasFull && !diskFull { notices.append(.diskSpaceBack(freeBytes: free)) }
            if !diskFull { notices += createReserveIfRoom(free: free) }
        }
        do {
            try applyCap(store.database)
            let usage = try self.usage(store.database)
            let limit = diskFull ? min(budget.maxDatabaseBytes, usage.fileBytes) : budget.maxDatabaseBytes
            if usage.usedBytes > limit / 10 * 9 {
                // On a full disk the limit is the file itself, which keychain, outbox and schema
                // pages fill as much as events do: pruning towards 80 % of it every tick would
                // delete the whole audit log, critical rows included, and still not get there.
                // There, housekeeping frees room from noise and ordinary events only; a critical
                // event is pruned only to make room for another one (makeRoom), or by age.
                let slices = diskFull ? PruneSlice.sizeOrder.filter { $0.retention != .critical } : PruneSlice.sizeOrder
                notices += try prune(store, reason: diskFull ? "disk full" : "size", target: limit / 10 * 8,
                                     batches: budget.maxBatchesPerRound, nowMillis: nowMillis, slices: slices)
            }
            if now.trusted, state.withLock({ $0.lastAgeCheckMillis.map { nowMillis >= $0 + Self.ageCheckIntervalMillis } ?? true }) {
                state.withLock { $0.lastAgeCheckMillis = nowMillis }
                notices += try pruneByAge(store, now: now.seconds, nowMillis: nowMillis)
            }
            if !diskFull, let pages = try vacuumIfOverBudget(store.database) { notices.append(.vacuumed(pages: pages)) }
        } catch {
            // A failed round changes nothing; the next tick tries again.
        }
        return notices
    }

    // MARK: SQLITE_FULL

    /// Called when a write failed with SQLITE_FULL; true when something was done that makes a
    /// retry worthwhile. Step 0 (any write): checkpoint and prune one round inside the file.
    /// Step 1 (security-critical writes only): lift the page cap by the reserve's size, and
    /// release the ballast if the disk is full. Step 2: release the ballast whatever statvfs says.
    func makeRoom(_ store: CarStore, step: Int, critical: Bool) -> Bool {
        switch step {
        case 0:
            _ = try? store.database.withoutTransaction { try $0.execute("PRAGMA wal_checkpoint(PASSIVE)") }
            // Never at the expense of an unpublished critical event, unless for another one.
            let slices = critical ? PruneSlice.sizeOrder : PruneSlice.sizeOrder.filter { !($0.unpublished && $0.retention == .critical) }
            let notices = (try? prune(store, reason: "full", target: nil, batches: 1, nowMillis: monotonicNow(), slices: slices)) ?? []
            state.withLock { $0.pending += notices }
            return true
        case 1 where critical:
            // The budget's share of the reserve: the cap goes up by the reserve's size, once.
            let lifted = (try? applyCap(store.database, extraBytes: max(reserve.bytes, 1 << 20))) ?? false
            // The disk's share: only when the disk is what is full.
            let free = StoreReserve.freeBytes(in: reserve.directory)
            let released = (free ?? 0) < budget.lowSpaceBytes && releaseReserve(freeBytes: free)
            return lifted || released
        case 2 where critical:
            return releaseReserve(freeBytes: StoreReserve.freeBytes(in: reserve.directory))
        default:
            return false
        }
    }

    private func releaseReserve(freeBytes: Int64?) -> Bool {
        guard reserve.release() else { return false }
        state.withLock {
            $0.diskFull = true
            $0.pending.append(.reserveReleased(bytes: reserve.bytes, freeBytes: freeBytes, why: "a security write needed room"))
        }
        return true
    }

    /// Puts the normal cap back after a security write was allowed past it.
    func restoreCap(_ database: Database) { _ = try? applyCap(database) }

    // MARK: Pruning

    /// Deletes batches in `order` (default `PruneSlice.sizeOrder`) until in-use bytes are at
    /// most `target` (nil: one batch that deleted something is enough) or `batches` batches
    /// ran. One transaction for the whole round, so one fsync however many batches.
    func prune(_ store: CarStore, reason: String, target: Int64?, batches: Int, nowMillis: UInt64,
               slices order: [PruneSlice] = PruneSlice.sizeOrder) throws -> [StoreNotice] {
        try round(store, reason: reason, nowMillis: nowMillis) { connection, batch in
            var slices = order[...]
            var remaining = batches
            while remaining > 0, let slice = slices.first {
                let done = try batch(slice, nil)
                // A slice found empty cost one short look-up, not a batch.
                if done.deleted > 0 || !done.exhausted { remaining -= 1 }
                if done.exhausted { slices = slices.dropFirst() }
                if let target {
                    if try Self.usage(connection).usedBytes <= target { break }
                } else if done.deleted > 0 {
                    break
                }
            }
        }
    }

    private func pruneByAge(_ store: CarStore, now: Int64, nowMillis: UInt64) throws -> [StoreNotice] {
        try round(store, reason: "age", nowMillis: nowMillis) { _, batch in
            var remaining = budget.maxBatchesPerRound
            for retention in EventRetention.allCases {
                let age = retention == .critical ? budget.maxCriticalEventAgeSeconds : budget.maxEventAgeSeconds
                for unpublished in [false, true] {
                    while remaining > 0 {
                        let done = try batch(PruneSlice(retention: retention, unpublished: unpublished), now - age)
                        if done.deleted > 0 || !done.exhausted { remaining -= 1 }
                        if done.exhausted { break }
                    }
                }
            }
        }
    }

    /// Runs `body` in one transaction with a batch function that prunes one slice (by size, or
    /// by age when given a cut-off) from where the last batch of that slice stopped. The first
    /// round that deletes anything after a quiet report interval also writes the "prune events"
    /// event, in the same transaction. Cursors move only once the round has committed.
    private func round(_ store: CarStore, reason: String, nowMillis: UInt64,
                       _ body: (Connection, (PruneSlice, Int64?) throws -> EventPruner.Batch) throws -> Void) throws -> [StoreNotice] {
        var (cursors, ageCursors, due) = state.withLock { state in
            (state.cursors, state.ageCursors, state.lastReportMillis.map { nowMillis >= $0 + budget.reportIntervalMillis } ?? true)
        }
        let usedBefore = try usage(store.database).usedBytes
        var first: PruneSlice?
        let notice = try store.maintenanceWrite { transaction -> StoreNotice? in
            let connection = transaction.connection
            try body(connection) { slice, olderThan in
                let cursor = (olderThan == nil ? cursors[slice] : ageCursors[slice]) ?? 0
                let batch = try EventPruner.pruneBatch(slice, after: cursor, olderThan: olderThan, limit: budget.pruneBatchRows,
                                                       connection: connection)
                if olderThan == nil { cursors[slice] = batch.cursor } else { ageCursors[slice] = batch.cursor }
                if batch.deleted > 0 && first == nil { first = slice }
                return batch
            }
            guard due, let first else { return nil }
            let totals = try EventPruner.totals(connection)
            try transaction.appendEvent(store.storageEvent(action: .pruneEvents, detail: [
                ("reason", reason), ("usedBytes", String(usedBefore)), ("budgetBytes", String(budget.maxDatabaseBytes)),
                ("firstClass", first.retention.description), ("unpublished", first.unpublished ? "yes" : "no"),
            ], totalsJSON: totals.json, result: "started"))
            return .pruningStarted(reason: reason, usedBytes: usedBefore, budgetBytes: budget.maxDatabaseBytes, totals: totals)
        }
        due = notice != nil
        state.withLock { state in
            state.cursors.merge(cursors) { max($0, $1) }
            state.ageCursors.merge(ageCursors) { max($0, $1) }
            if due { state.lastReportMillis = nowMillis }
        }
        return notice.map { [$0] } ?? []
    }

    // MARK: Pages

    func usage(_ database: Database) throws -> Usage { try Self.usage(database) }

    struct Usage {
        let pageSize: Int64
        let pageCount: Int64
        let freePages: Int64
        var fileBytes: Int64 { pageCount * pageSize }
        var usedBytes: Int64 { (pageCount - freePages) * pageSize }
    }

    static func usage(_ database: Database) throws -> Usage {
        try database.withoutTransaction { try usage($0) }
    }

    /// On a connection, also inside a write transaction (then with its changes).
    static func usage(_ connection: Connection) throws -> Usage {
        func pragma(_ name: String) throws -> Int64 {
            guard case .integer(let value)? = try connection.scalar("PRAGMA \(name)") else { return 0 }
            return value
        }
        return Usage(pageSize: max(512, try pragma("page_size")), pageCount: try pragma("page_count"),
                     freePages: try pragma("freelist_count"))
    }

    /// Sets the writer's page cap: the budget, or no growth at all while the disk is full,
    /// plus `extraBytes` for a security write. SQLite never sets it below the current page
    /// count. Returns whether the cap went up.
    @discardableResult
    private func applyCap(_ database: Database, extraBytes: Int64 = 0) throws -> Bool {
        let usage = try self.usage(database)
        var pages = budget.maxDatabaseBytes / usage.pageSize
        if diskFull { pages = min(pages, usage.pageCount) }
        pages += extraBytes / usage.pageSize
        let unchanged = state.withLock { state in
            defer { state.requestedCap = pages }
            return state.requestedCap == pages
        }
        if unchanged { return false }
        return try database.withoutTransaction { connection in
            let before = try connection.scalar("PRAGMA max_page_count")
            try connection.execute("PRAGMA max_page_count = \(pages)")
            guard case .integer(let old)? = before, case .integer(let new)? = try connection.scalar("PRAGMA max_page_count") else {
                return false
            }
            return new > old
        }
    }

    /// With auto_vacuum=INCREMENTAL, gives free pages beyond the budget back (bounded).
    private func vacuumIfOverBudget(_ database: Database) throws -> Int64? {
        let usage = try self.usage(database)
        guard usage.freePages > 0, usage.fileBytes > budget.maxDatabaseBytes else { return nil }
        return try database.withoutTransaction { connection -> Int64? in
            guard try connection.scalar("PRAGMA auto_vacuum") == .integer(2) else { return nil }
            let pages = min(usage.freePages, (usage.fileBytes - budget.maxDatabaseBytes) / usage.pageSize + 1, 256)
            try connection.execute("PRAGMA incremental_vacuum(\(pages))")
            return pages
        }
    }

    private func createReserveIfRoom(free: Int64) -> [StoreNotice] {
        guard budget.reserveBytes > 0, !reserve.isPresent else { return [] }
        guard free >= budget.reserveBytes + budget.lowSpaceBytes else {
            return []
        }
        do {
            try reserve.create()
            return [.reserveCreated(bytes: reserve.bytes)]
        } catch {
            return [.reserveNotCreated(bytes: reserve.bytes, reason: error.description)]
        }
    }
}

// The store budget as the agent sees it: one maintenance round per housekeeping tick, and
// figures for status displays.

/// Size and pruning figures of the store.
public struct StoreSpaceStatus: Equatable, Sendable {
    public let fileBytes: Int64
    public let usedBytes: Int64
    public let budgetBytes: Int64?
    public let freeDiskBytes: Int64?
    public let diskFull: Bool
    public let reservePresent: Bool
    public let pruned: PrunedTotals
}

extension CarStore {
    /// Runs one bounded budget round (prunes in batches, keeps the reserve, notices a full
    /// disk) and returns what to tell the operator. Nothing to do without a budget.
    public func maintainBudget(now: EventTime, nowMillis: UInt64) -> [StoreNotice] {
        space?.maintain(self, now: now, nowMillis: nowMillis) ?? []
    }

    public func spaceStatus() throws(StorageError) -> StoreSpaceStatus { try StorageError.wrap {
            let usage = try StoreSpace.usage(database)
            let pruned = try read { try EventPruner.totals($0.connection) }
            return StoreSpaceStatus(fileBytes: usage.fileBytes, usedBytes: usage.usedBytes, budgetBytes: space?.budget.maxDatabaseBytes,
                                    freeDiskBytes: StoreReserve.freeBytes(in: stateDirectory.path), diskFull: space?.diskFull ?? false,
                                    reservePresent: space?.reserve.isPresent ?? false, pruned: pruned)
        }
    }
}

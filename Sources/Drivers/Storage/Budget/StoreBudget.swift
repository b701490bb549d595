// How much of the disk the store may use, and for how long it keeps events. The agent passes
// one to `CarStore.open`; tools that only read (`carkey-agent events`, `keys`) pass none.
//
// Defaults are sized for an SD card shared with the operating system: 64 MiB of database is
// about 200,000 events (years of ordinary use, minutes of a `status` flood), and an 8 MiB
// reserve file is enough for SQLite to create its WAL and commit security writes for a long
// time after the disk is full (docs/operations.md, section 1).

public struct StoreBudget: Sendable, Equatable {
    /// The database file is kept at or below this size (pages in use; freed pages are reused).
    public var maxDatabaseBytes: Int64
    /// Size of the ballast file (DIR/reserve) released when the disk is full; 0: none.
    public var reserveBytes: Int64
    /// Session noise and ordinary events older than this are pruned (trusted clock only).
    public var maxEventAgeSeconds: Int64
    /// Access decisions, tamper findings and keychain changes are kept this long.
    public var maxCriticalEventAgeSeconds: Int64
    /// Rows deleted per transaction, and transactions per maintenance round: one round never
    /// holds the write lock for long (a batch of 256 rows is a few milliseconds).
    public var pruneBatchRows: Int
    public var maxBatchesPerRound: Int
    /// At most one "prune events" event (and log line) per this interval, so pruning cannot
    /// itself become the noise it removes.
    public var reportIntervalMillis: UInt64

    public static let defaultMaxDatabaseBytes: Int64 = 64 << 20
    public static let defaultReserveBytes: Int64 = 8 << 20
    public static let defaultMaxEventAgeSeconds: Int64 = 90 * 86_400
    public static let defaultMaxCriticalEventAgeSeconds: Int64 = 730 * 86_400

    public init(maxDatabaseBytes: Int64 = StoreBudget.defaultMaxDatabaseBytes,
                reserveBytes: Int64 = StoreBudget.defaultReserveBytes,
                maxEventAgeSeconds: Int64 = StoreBudget.defaultMaxEventAgeSeconds,
                maxCriticalEventAgeSeconds: Int64 = StoreBudget.defaultMaxCriticalEventAgeSeconds,
                pruneBatchRows: Int = 256, maxBatchesPerRound: Int = 8, reportIntervalMillis: UInt64 = 3_600_000) {
        self.maxDatabaseBytes = max(256 << 10, maxDatabaseBytes)
        self.reserveBytes = max(0, reserveBytes)
        self.maxEventAgeSeconds = max(3600, maxEventAgeSeconds)
        self.maxCriticalEventAgeSeconds = max(self.maxEventAgeSeconds, maxCriticalEventAgeSeconds)
        self.pruneBatchRows = max(1, pruneBatchRows)
        self.maxBatchesPerRound = max(1, maxBatchesPerRound)
        self.reportIntervalMillis = reportIntervalMillis
    }

    /// Pruning starts above this much in use ...
    var highWaterBytes: Int64 { maxDatabaseBytes / 10 * 9 }
    /// ... and stops below this, so a round frees room for many writes, not one.
    var lowWaterBytes: Int64 { maxDatabaseBytes / 10 * 8 }
    /// Below this much free space on the file system the disk counts as full: the reserve is
    /// released and the database file stops growing.
    var lowSpaceBytes: Int64 { max(reserveBytes, 1 << 20) }
    /// The WAL is checkpointed before it outgrows half the reserve, so a WAL that must be
    /// created on a full disk (a lost or first-run WAL) fits in the released reserve.
    func walLimitBytes(pageSize: Int64) -> Int64 {
        let half = reserveBytes > 0 ? reserveBytes / 2 : 4 << 20
        return min(max(half, 64 * pageSize), 1000 * pageSize)
    }
}

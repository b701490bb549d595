// What durability costs this process: every SQLite file is opened through a thin VFS over the
// default one (CShims/sync_counting_vfs.c) that counts xSync calls, the time spent in them and
// the bytes written. The counters are always on (a few relaxed atomic adds per write or sync)
// so the agent's `stats` command and the benchmarks read the same numbers. The VFS can also
// sleep a fixed time after every sync, to emulate slow media (SD cards: 2-10 ms per fsync);
// only benchmarks set that.
import CShims
import CSQLite

/// Cumulative storage I/O counters of this process (all databases), since it started.
public struct StorageSyncCounters: Sendable, Equatable {
    /// xSync calls on any database file.
    public var syncs: UInt64
    /// Of which on a WAL file (with synchronous=FULL: one per committed write transaction).
    public var walSyncs: UInt64
    /// Wall time spent inside xSync, any added delay included.
    public var syncNanos: UInt64
    public var bytesWritten: UInt64
    public var writes: UInt64

    /// The counts accumulated between `earlier` and this snapshot.
    public func since(_ earlier: StorageSyncCounters) -> StorageSyncCounters {
        StorageSyncCounters(syncs: syncs &- earlier.syncs, walSyncs: walSyncs &- earlier.walSyncs,
                            syncNanos: syncNanos &- earlier.syncNanos, bytesWritten: bytesWritten &- earlier.bytesWritten,
                            writes: writes &- earlier.writes)
    }

    /// Mean time per sync in microseconds (0 when there was none).
    public var meanSyncMicros: Double { syncs == 0 ? 0 : Double(syncNanos) / Double(syncs) / 1000 }
}

public enum StorageSyncs {
    /// Installs the counting VFS as SQLite's default, once per process. `Connection` does this
    /// before its first open, so every database of the process is counted.
    static let installed: Int32 = ock_sync_vfs_install()

    /// Makes sure the counting VFS is in place (idempotent); true when it is.
    @discardableResult
    public static func install() -> Bool { installed == SQLITE_OK }

    public static var counters: StorageSyncCounters {
        let raw = ock_sync_vfs_counters()
        return StorageSyncCounters(syncs: raw.syncs, walSyncs: raw.wal_syncs, syncNanos: raw.sync_nanos,
                                   bytesWritten: raw.bytes_written, writes: raw.writes)
    }

    /// Benchmark hook: sleep this long after every sync from now on (0 turns it off).
    public static var addedSyncDelayMicros: UInt32 {
        get { ock_sync_vfs_delay_us() }
        set { ock_sync_vfs_set_delay_us(newValue) }
    }

    /// The environment variable the agent reads once at start-up (benchmarks only).
    public static let delayEnvironmentVariable = "CARKEY_BENCH_SYNC_DELAY_US"
}

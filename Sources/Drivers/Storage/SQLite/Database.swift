// The shareable handle on one SQLite database file: a single connection behind a lock, the
// durability PRAGMAs, and transactions. Every read and write goes through `transaction` or
// `read`, so no caller can observe or leave behind a half-applied change.
//
// Group commit (the MQTT outbox, later): a writer that collects many enqueues and applies them in
// one `transaction` pays one WAL fsync for all of them; nothing here assumes one row per commit.
// A second, read-only connection for concurrent readers can be added beside this one (WAL lets
// readers run while a writer commits) without changing the transaction API.
import CSQLite

public final class Database: @unchecked Sendable {
    /// How long a writer waits for another process's lock (the CLI reading while the agent writes).
    public static let defaultBusyTimeoutMillis: Int32 = 5000
    /// Page cache per connection, in KiB (SQLite's `cache_size` as a negative number). SQLite's
    /// default is 2000 KiB a connection and grows to it as pages are touched, so an agent that
    /// runs for months would sit at twice that for its two connections; the working set here
    /// (keys, the outbox head, the newest events) is a few hundred pages, so a fixed, smaller
    /// cap makes the steady-state memory a number we state (docs/operations.md) rather than
    /// SQLite's default.
    public static let writerCacheKiB = 1024
    public static let readerCacheKiB = 512

    // @unchecked Sendable: `connection` is only touched inside `lock.withLock`, `reader` only
    // inside `readerLock.withLock`.
    private let connection: Connection
    private let lock = ConnectionLock()
    /// A second, query-only connection for `read`: in WAL mode it reads the last commit while
    /// the writer holds its lock through a transaction's fsync, so the cloud thread's outbox
    /// reads never wait behind a group commit.
    private let reader: Connection
    private let readerLock = ConnectionLock()
    public let path: String

    /// Opens (and with `create`, creates) the database and applies the PRAGMAs every connection
    /// needs: WAL journal, synchronous=FULL (a commit is on disk when it returns), foreign keys,
    /// a busy timeout, and trusted_schema=OFF (a planted trigger or view cannot call functions
    /// with side effects).
    public init(path: String, create: Bool, busyTimeoutMillis: Int32 = Database.defaultBusyTimeoutMillis) throws {
        connection = try Connection(path: path, create: create)
        self.path = path
        let code = sqlite3_busy_timeout(connection.handle, busyTimeoutMillis)
        guard code == SQLITE_OK else { throw SQLiteError.from(connection.handle, code: code, operation: "busy_timeout") }
        try connection.execute("PRAGMA trusted_schema = OFF")
        try connection.execute("PRAGMA foreign_keys = ON")
        try connection.execute("PRAGMA cell_size_check = ON")
        // journal_mode answers with the mode in force; a filesystem without shared memory
        // support would silently keep the rollback journal, so check the answer.
        let mode = try connection.scalar("PRAGMA journal_mode = WAL")
        guard case .text(let actual)? = mode, actual.lowercased() == "wal" else {
            throw SQLiteError(code: SQLITE_ERROR, message: "journal_mode is not WAL", operation: "open \(path)")
        }
        try connection.execute("PRAGMA synchronous = FULL")
        try connection.execute("PRAGMA cache_size = -\(Self.writerCacheKiB)")
        guard try connection.scalar("PRAGMA synchronous") == .integer(2),
              try connection.scalar("PRAGMA foreign_keys") == .integer(1) else {
            throw SQLiteError(code: SQLITE_ERROR, message: "synchronous or foreign_keys not applied", operation: "open \(path)")
        }
        reader = try Connection(path: path, create: false)
        let readerCode = sqlite3_busy_timeout(reader.handle, busyTimeoutMillis)
        guard readerCode == SQLITE_OK else { throw SQLiteError.from(reader.handle, code: readerCode, operation: "busy_timeout") }
        try reader.execute("PRAGMA trusted_schema = OFF")
        try reader.execute("PRAGMA cell_size_check = ON")
        try reader.execute("PRAGMA query_only = ON")
        try reader.execute("PRAGMA cache_size = -\(Self.readerCacheKiB)")
    }

    /// Runs `body` in a write transaction (BEGIN IMMEDIATE: the write lock is taken up front, so
    /// the transaction cannot fail half-way with SQLITE_BUSY on upgrade). Commits when `body`
    /// returns; rolls back when it throws, and rethrows. Calling `transaction` or `read` from
    /// inside `body` is an error (SQLITE_MISUSE), not a deadlock.
    public func transaction<T>(_ body: (Connection) throws -> T) throws -> T {
        try locked { connection in
            try connection.execute("BEGIN IMMEDIATE")
            return try finish(connection, body)
        }
    }

    /// Runs `body` in a read transaction on the query-only connection: one consistent snapshot
    /// of the last commit across all its queries; writes inside `body` fail (SQLITE_READONLY).
    /// Calling it from inside `transaction` on the same thread is SQLITE_MISUSE (it could not
    /// see that transaction's uncommitted changes).
    public func read<T>(_ body: (Connection) throws -> T) throws -> T {
        guard !lock.isHeldByCurrentThread, !readerLock.isHeldByCurrentThread else {
            throw SQLiteError(code: SQLITE_MISUSE, message: "nested use of the database from inside a transaction",
                              operation: "read \(path)")
        }
        return try readerLock.withLock {
            guard !reader.isClosed else { throw SQLiteError(code: SQLITE_MISUSE, message: "the database is closed", operation: "read \(path)") }
            try reader.execute("BEGIN DEFERRED")
            return try finish(reader, body)
        }
    }

    /// Runs `body` outside any transaction, for statements SQLite refuses inside one
    /// (wal_checkpoint, VACUUM, integrity checks over the whole file).
    public func withoutTransaction<T>(_ body: (Connection) throws -> T) throws -> T {
        try locked(body)
    }

    /// PRAGMA integrity_check: ["ok"] for a healthy file, otherwise SQLite's findings.
    public func integrityCheck() throws -> [String] {
        try locked { connection in
            try connection.rows("PRAGMA integrity_check").map { row in
                if case .text(let line)? = row.first { return line }
                return "unexpected integrity_check row"
            }
        }
    }

    /// Keeps the WAL and its index file (-shm) when the last connection closes instead of
    /// deleting them (SQLITE_FCNTL_PERSIST_WAL on both connections), so the space they hold
    /// stays allocated for the next start: the store budget's start-up on a full disk needs it.
    public func keepWALBetweenRuns() {
        for (connection, lock) in [(self.connection, self.lock), (reader, readerLock)] {
            lock.withLock {
                guard !connection.isClosed else { return }
                var on: Int32 = 1
                sqlite3_file_control(connection.handle, "main", SQLITE_FCNTL_PERSIST_WAL, &on)
            }
        }
    }

    /// Copies committed WAL content into the main file and truncates the WAL.
    public func checkpoint() throws {
        try locked { connection in try connection.execute("PRAGMA wal_checkpoint(TRUNCATE)") }
    }

    /// wal_checkpoint(TRUNCATE), then both connections closed: afterwards carkey.db alone holds
    /// every commit and the WAL is 0 bytes, so a stopped car's database file can be copied on
    /// its own. The checkpoint is not complete when another process still reads an older
    /// snapshot (SQLite answers busy instead of failing): the result says so. Any later use of
    /// this Database throws SQLITE_MISUSE; closing twice does nothing.
    /// `truncate` false: wal_checkpoint(RESTART) instead, which copies every frame into the
    /// main file just the same but leaves the WAL file's allocated size (see
    /// CarStore.checkpointAndClose for when that room is needed).
    @discardableResult
    public func checkpointAndClose(truncate: Bool = true) throws -> CheckpointResult {
        try readerLock.withLock {
            try lock.withLock {
                guard !connection.isClosed else { return CheckpointResult(busy: false, walFrames: 0, checkpointedFrames: 0) }
                defer {
                    reader.close()
                    connection.close()
                }
                let row = try connection.rows(truncate ? "PRAGMA wal_checkpoint(TRUNCATE)" : "PRAGMA wal_checkpoint(RESTART)").first ?? []
                func number(_ index: Int) -> Int64 {
                    if index < row.count, case .integer(let value) = row[index] { return value }
                    return -1
                }
                var result = CheckpointResult(busy: number(0) != 0, walFrames: number(1), checkpointedFrames: number(2))
                result.truncated = truncate
                return result
            }
        }
    }

    /// What `checkpointAndClose` did (PRAGMA wal_checkpoint's row).
    public struct CheckpointResult: Equatable, Sendable {
        /// Another connection kept the checkpoint from finishing: the WAL still holds commits.
        public let busy: Bool
        /// True when the WAL file was truncated to 0 bytes (TRUNCATE), false when its room was kept.
        public var truncated = true
        public let walFrames: Int64
        public let checkpointedFrames: Int64
    }

    private func locked<T>(_ body: (Connection) throws -> T) throws -> T {
        guard !lock.isHeldByCurrentThread else {
            throw SQLiteError(code: SQLITE_MISUSE, message: "nested use of the database from inside a transaction",
                              operation: "transaction \(path)")
        }
        return try lock.withLock {
            guard !connection.isClosed else { throw SQLiteError(code: SQLITE_MISUSE, message: "the database is closed", operation: "use \(path)") }
            return try body(connection)
        }
    }

    /// Commits after `body`, or rolls back on any error (from `body` or from COMMIT itself).
    private func finish<T>(_ connection: Connection, _ body: (Connection) throws -> T) throws -> T {
        do {
            let result = try body(connection)
            try connection.execute("COMMIT")
            return result
        } catch {
            // SQLite may already have rolled back by itself (SQLITE_FULL, SQLITE_IOERR).
            if connection.inTransaction { try? connection.execute("ROLLBACK") }
            throw error
        }
    }
}

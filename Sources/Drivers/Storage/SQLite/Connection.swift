// One SQLite connection: open, prepare, execute. The single-thread rule: a Connection is not
// Sendable and is only ever used by one thread at a time; `Database` enforces that with a lock
// and is the type to share. SQLITE_OPEN_FULLMUTEX is set as well, so a mistake degrades to
// serialised calls rather than memory corruption.
import CSQLite
import Protocol

public final class Connection {
    let handle: OpaquePointer
    public let path: String
    /// Prepared statements by SQL text, reused by run/rows/scalar: preparing costs more than
    /// running a small statement, and the outbox runs the same few statements thousands of times.
    private var statementCache: [String: Statement] = [:]
    private static let statementCacheLimit = 64

    /// Opens `path` read-write. `create` adds SQLITE_OPEN_CREATE; symbolic links are refused
    /// (SQLITE_OPEN_NOFOLLOW) so a planted link cannot redirect the database elsewhere.
    public init(path: String, create: Bool) throws {
        // Every file goes through the sync-counting VFS (a pass-through that only counts; if it
        // could not be registered SQLite's own default is used and the counters stay at zero).
        StorageSyncs.install()
        var flags = SQLITE_OPEN_READWRITE | SQLITE_OPEN_FULLMUTEX | SQLITE_OPEN_NOFOLLOW
        if create { flags |= SQLITE_OPEN_CREATE }
        var opened: OpaquePointer?
        let code = sqlite3_open_v2(path, &opened, flags, nil)
        guard code == SQLITE_OK, let opened else {
            let error = SQLiteError.from(opened, code: code, operation: "open \(path)")
            // sqlite3_open_v2 allocates a handle even on failure; it must still be closed.
            sqlite3_close_v2(opened)
            throw error
        }
        handle = opened
        self.path = path
        sqlite3_extended_result_codes(handle, 1)
    }

    /// True after `close`: the handle must not be used any more.
    public private(set) var isClosed = false

    /// sqlite3_close_v2 defers the close until outstanding statements are finalized.
    deinit { if !isClosed { sqlite3_close_v2(handle) } }

    /// Closes the connection now (the cached statements first). Idempotent.
    public func close() {
        guard !isClosed else { return }
        statementCache.removeAll()
        sqlite3_close_v2(handle)
        isClosed = true
    }

    /// Prepares one statement. SQL passed here is constant text from this code base (values
    /// always go through binds), so it may appear in error messages.
    public func prepare(_ sql: String) throws -> Statement {
        var statement: OpaquePointer?
        let code = sqlite3_prepare_v2(handle, sql, -1, &statement, nil)
        guard code == SQLITE_OK, let statement else {
            sqlite3_finalize(statement)
            throw SQLiteError.from(handle, code: code == SQLITE_OK ? SQLITE_MISUSE : code, operation: "prepare: \(Self.label(sql))")
        }
        return Statement(handle: statement, connection: handle, label: Self.label(sql))
    }

    /// Runs one or more `;`-separated statements without binds (schema, PRAGMAs, BEGIN/COMMIT).
    public func execute(_ sql: String) throws {
        let code = sqlite3_exec(handle, sql, nil, nil, nil)
        guard code == SQLITE_OK else {
            throw SQLiteError.from(handle, code: sqlite3_extended_errcode(handle), operation: "execute: \(Self.label(sql))")
        }
    }

    /// The cached prepared statement for `sql` (prepared on first use).
    func cached(_ sql: String) throws -> Statement {
        if let statement = statementCache[sql] { return statement }
        let statement = try prepare(sql)
        if statementCache.count >= Self.statementCacheLimit { statementCache.removeAll() }
        statementCache[sql] = statement
        return statement
    }

    /// Prepares (once), binds and runs a statement that returns no rows.
    public func run(_ sql: String, _ values: [SQLiteValue] = []) throws {
        try cached(sql).bind(values).run()
    }

    /// The rows of a query, each as its column values.
    public func rows(_ sql: String, _ values: [SQLiteValue] = []) throws -> [[SQLiteValue]] {
        let statement = try cached(sql).bind(values)
        defer { statement.reset() }
        var out = [[SQLiteValue]]()
        while try statement.step() {
            out.append((0..<statement.columnCount).map { statement.value($0) })
        }
        return out
    }

    /// The first column of the first row, or nil when the query returns no row.
    public func scalar(_ sql: String, _ values: [SQLiteValue] = []) throws -> SQLiteValue? {
        let statement = try cached(sql).bind(values)
        defer { statement.reset() }
        guard try statement.step() else { return nil }
        return statement.value(0)
    }

    /// Rows changed by the last INSERT, UPDATE or DELETE.
    public var changes: Int { Int(sqlite3_changes(handle)) }

    public var lastInsertRowID: Int64 { sqlite3_last_insert_rowid(handle) }

    /// True while a transaction is open on this connection.
    public var inTransaction: Bool { sqlite3_get_autocommit(handle) == 0 }

    /// Keeps error messages short: the first line of the SQL, at most 80 characters.
    static func label(_ sql: String) -> String {
        let line = sql.split(whereSeparator: \.isNewline).first.map(String.init) ?? ""
        return line.count > 80 ? String(line.prefix(80)) + "…" : line
    }
}

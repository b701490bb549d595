// SQLite's online backup API (sqlite3_backup_init/step/finish): copies every page of one
// database into another connection's database while other processes keep using the source.
// One sqlite3_backup_step(-1) copies all pages under a single read transaction on the source,
// so the copy is one consistent snapshot: in WAL mode writers carry on meanwhile and none of
// their later commits can tear or restart it (a copy made step by step could restart).
import CSQLite

extension Connection {
    /// Replaces `destination`'s main database with a snapshot of this connection's. Retries a
    /// lock held by another process (SQLITE_BUSY/LOCKED) for about `busyRetries` × 50 ms.
    /// Returns the number of pages copied.
    @discardableResult
    public func backup(into destination: Connection, busyRetries: Int = 200) throws -> Int {
        let operation = "backup \(path) to \(destination.path)"
        guard let backup = sqlite3_backup_init(destination.handle, "main", handle, "main") else {
            throw SQLiteError.from(destination.handle, code: sqlite3_extended_errcode(destination.handle), operation: operation)
        }
        var code: Int32
        var retries = 0
        while true {
            code = sqlite3_backup_step(backup, -1)
            let primary = code & 0xff
            guard primary == SQLITE_BUSY || primary == SQLITE_LOCKED, retries < busyRetries else { break }
            retries += 1
            sqlite3_sleep(50)
        }
        let pages = Int(sqlite3_backup_pagecount(backup))
        // finish releases the locks and reports the error of a failed step again.
        let finished = sqlite3_backup_finish(backup)
        guard code == SQLITE_DONE else {
            throw SQLiteError.from(destination.handle, code: code, operation: operation)
        }
        guard finished == SQLITE_OK else {
            throw SQLiteError.from(destination.handle, code: finished, operation: operation)
        }
        return pages
    }

    /// Keeps the WAL and -shm files when this connection is the last to close (see
    /// `Database.keepWALBetweenRuns`): a tool must not take away the room the agent keeps.
    public func keepWALOnClose() {
        var on: Int32 = 1
        sqlite3_file_control(handle, "main", SQLITE_FCNTL_PERSIST_WAL, &on)
    }

    /// Sets the busy timeout (milliseconds) for locks held by other connections.
    public func setBusyTimeout(_ milliseconds: Int32) throws {
        let code = sqlite3_busy_timeout(handle, milliseconds)
        guard code == SQLITE_OK else { throw SQLiteError.from(handle, code: code, operation: "busy_timeout") }
    }
}

// A typed SQLite failure: the result code, SQLite's own message and what we were doing.
// Never carries bound values: messages come from sqlite3_errmsg and our constant SQL labels.
// The SQLite wrapper (Database, Connection, Statement) throws it as is; the store's public API
// (CarStore, StoreTransaction, SQLiteOutbox) wraps it as `StorageError.sqlite`.
import CSQLite

public struct SQLiteError: Error, Equatable, Sendable, CustomStringConvertible {
    /// The extended result code (e.g. SQLITE_CONSTRAINT_UNIQUE); `primaryCode` strips it.
    public let code: Int32
    /// sqlite3_errmsg at the time of failure: names tables, columns or syntax, never values.
    public let message: String
    /// What the wrapper was doing, e.g. "prepare", "step", "open /var/lib/opencarkey/carkey.db".
    public let operation: String

    public init(code: Int32, message: String, operation: String) {
        self.code = code
        self.message = message
        self.operation = operation
    }

    /// The primary result code (SQLITE_BUSY, SQLITE_CORRUPT, ...).
    public var primaryCode: Int32 { code & 0xff }

    public var isBusy: Bool { primaryCode == SQLITE_BUSY || primaryCode == SQLITE_LOCKED }
    public var isCorrupt: Bool { primaryCode == SQLITE_CORRUPT || primaryCode == SQLITE_NOTADB }

    public var description: String { "\(operation): \(message) (SQLite code \(code))" }

    /// Builds the error from a connection's current state (or the code alone when there is none).
    static func from(_ handle: OpaquePointer?, code: Int32, operation: String) -> SQLiteError {
        let message: String
        if let handle, let text = sqlite3_errmsg(handle) {
            message = String(cString: text)
        } else if let text = sqlite3_errstr(code) {
            message = String(cString: text)
        } else {
            message = "unknown error"
        }
        return SQLiteError(code: code, message: message, operation: operation)
    }
}

// A prepared statement with typed binds and column reads. Finalized when released.
// Not Sendable: it belongs to the connection that prepared it, which one thread uses at a time.
import CSQLite
import CShims
import Protocol

public final class Statement {
    private let handle: OpaquePointer
    private let connection: OpaquePointer
    private let label: String

    init(handle: OpaquePointer, connection: OpaquePointer, label: String) {
        self.handle = handle
        self.connection = connection
        self.label = label
    }

    deinit { sqlite3_finalize(handle) }

    // MARK: Binding (1-based indexes, as in SQL's ?1, ?2, ...)

    /// Clears previous bindings and binds `values` to ?1, ?2, ... in order.
    @discardableResult
    public func bind(_ values: [SQLiteValue]) throws -> Statement {
        try check(sqlite3_reset(handle), "reset")
        try check(sqlite3_clear_bindings(handle), "clear bindings")
        for (offset, value) in values.enumerated() {
            try bind(value, at: Int32(offset + 1))
        }
        return self
    }

    public func bind(_ value: SQLiteValue, at index: Int32) throws {
        switch value {
        case .null:
            try check(sqlite3_bind_null(handle, index), "bind")
        case .integer(let number):
            try check(sqlite3_bind_int64(handle, index, number), "bind")
        case .text(let text):
            let utf8 = Array(text.utf8)
            // An empty array may have no base address, which SQLite would bind as NULL.
            if utf8.isEmpty {
                try check(sqlite3_bind_text(handle, index, "", 0, ock_sqlite_transient()), "bind")
            } else {
                let code = utf8.withUnsafeBufferPointer { buffer in
                    buffer.withMemoryRebound(to: CChar.self) {
                        sqlite3_bind_text(handle, index, $0.baseAddress, Int32(utf8.count), ock_sqlite_transient())
                    }
                }
                try check(code, "bind")
            }
        case .blob(let bytes):
            // Same reason as for text: a zero-length blob must stay a blob, not become NULL.
            if bytes.isEmpty {
                try check(sqlite3_bind_zeroblob(handle, index, 0), "bind")
            } else {
                let code = bytes.withUnsafeBytes {
                    sqlite3_bind_blob(handle, index, $0.baseAddress, Int32(bytes.count), ock_sqlite_transient())
                }
                try check(code, "bind")
            }
        }
    }

    // MARK: Stepping

    /// Advances to the next row: true when a row is available, false when done.
    public func step() throws -> Bool {
        let code = sqlite3_step(handle)
        switch code {
        case SQLITE_ROW: return true
        case SQLITE_DONE: return false
        default:
            // Read the message before reset, which would replace it.
            let error = SQLiteError.from(connection, code: sqlite3_extended_errcode(connection), operation: "step: \(label)")
            sqlite3_reset(handle)
            throw error
        }
    }

    /// Ends the current execution (releasing its read lock) without clearing bindings.
    public func reset() { sqlite3_reset(handle) }

    /// Runs a statement that returns no rows (or whose rows are ignored) to completion.
    public func run() throws {
        while try step() {}
        sqlite3_reset(handle)
    }

    // MARK: Columns (0-based, as SQLite numbers result columns)

    public var columnCount: Int32 { sqlite3_column_count(handle) }

    public func isNull(_ column: Int32) -> Bool { sqlite3_column_type(handle, column) == SQLITE_NULL }

    public func int64(_ column: Int32) -> Int64 { sqlite3_column_int64(handle, column) }

    /// The column as text, or nil when it is NULL.
    public func text(_ column: Int32) -> String? {
        guard !isNull(column), let pointer = sqlite3_column_text(handle, column) else { return nil }
        let count = Int(sqlite3_column_bytes(handle, column))
        return String(decoding: UnsafeBufferPointer(start: pointer, count: count), as: UTF8.self)
    }

    /// The column as bytes, or nil when it is NULL. A zero-length blob reads as [].
    public func blob(_ column: Int32) -> Bytes? {
        guard !isNull(column) else { return nil }
        let pointer = sqlite3_column_blob(handle, column)
        let count = Int(sqlite3_column_bytes(handle, column))
        guard let pointer, count > 0 else { return [] }
        return Bytes(UnsafeRawBufferPointer(start: pointer, count: count))
    }

    /// The column as whichever storage class SQLite holds it in.
    public func value(_ column: Int32) -> SQLiteValue {
        switch sqlite3_column_type(handle, column) {
        case SQLITE_NULL: return .null
        case SQLITE_INTEGER: return .integer(int64(column))
        case SQLITE_BLOB: return .blob(blob(column) ?? [])
        default: return .text(text(column) ?? "")
        }
    }

    private func check(_ code: Int32, _ what: String) throws {
        guard code == SQLITE_OK else {
            throw SQLiteError.from(connection, code: sqlite3_extended_errcode(connection), operation: "\(what): \(label)")
        }
    }
}

// The audit chain's head: the sequence and hash the next appended event links to. Kept in its
// own one-row table (AuditSchema) because pruning may delete every event row.
import CSQLite
import Protocol

public struct AuditChainHead: Equatable, Sendable {
    /// The last chained event's sequence (the event counter at upgrade time before the first).
    public let seq: Int64
    /// Its hash, or `EventChainLink.genesis` before the first chained event.
    public let hash: Bytes

    /// True once at least one event was chained.
    public var hasEvents: Bool { hash != EventChainLink.genesis }
}

enum ChainHead {
    /// The head, or nil on a database not yet upgraded to the chain (schema before version 4).
    /// (SQLite's message starts "no such table: ..."; hasPrefix, because String.contains(String)
    /// lives in _StringProcessing, which would add 1.3 MB to the static binary.)
    static func read(_ connection: Connection) throws -> AuditChainHead? {
        let rows: [[SQLiteValue]]
        do {
            rows = try connection.rows("SELECT seq, hash FROM audit_chain_head WHERE id = 1")
        } catch let error as SQLiteError where error.primaryCode == SQLITE_ERROR && error.message.hasPrefix("no such table") {
            return nil
        }
        guard let row = rows.first, row.count == 2, case .integer(let seq) = row[0], case .blob(let hash) = row[1],
              hash.count == SHA256.byteCount else {
            throw SQLiteError(code: SQLITE_CORRUPT, message: "audit chain head missing or malformed", operation: "read chain head")
        }
        return AuditChainHead(seq: seq, hash: hash)
    }

    static func advance(seq: Int64, hash: Bytes, _ connection: Connection) throws {
        try connection.run("UPDATE audit_chain_head SET seq = ?1, hash = ?2 WHERE id = 1", [.integer(seq), .blob(hash)])
    }
}

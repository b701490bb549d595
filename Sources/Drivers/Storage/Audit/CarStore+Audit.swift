// The store's side of audit checkpoints: the chain head, the pruned gaps since the previous
// checkpoint, and writing a signed checkpoint to the local table and the outbox in one
// transaction.
import Protocol

extension CarStore {
    /// The audit chain's head (nil on a database without the chain, which `open` never leaves).
    public func auditChainHead() throws(StorageError) -> AuditChainHead? { try StorageError.wrap {
            try read { try ChainHead.read($0.connection) }
        }
    }

    /// Builds, signs and stores a checkpoint of the current head, and queues it on
    /// `topic` (the cloud's audit topic; never shed). Chained events missing since the previous checkpoint
    /// (pruned) ride along as ranges; more than `AuditCheckpoint.maximumPrunedRanges` are
    /// spread over several checkpoints of the same head, all in this one transaction. Returns
    /// the last checkpoint written, or nil when there is nothing to vouch for.
    @discardableResult
    public func writeAuditCheckpoint(key: any ProtocolSigner, vehicleID: String, topic: String, time: EventTime) throws(StorageError) -> AuditCheckpoint? { try StorageError.wrap {
            try write { transaction in
                let connection = transaction.connection
                guard let head = try ChainHead.read(connection), head.hasEvents else { return nil }
                let ranges = try AuditCheckpoints.prunedRanges(through: head, connection: connection)
                var chunks = stride(from: 0, to: ranges.count, by: AuditCheckpoint.maximumPrunedRanges).map {
                    Array(ranges[$0..<min($0 + AuditCheckpoint.maximumPrunedRanges, ranges.count)])
                }
                if chunks.isEmpty { chunks = [[]] }
                var last: AuditCheckpoint?
                for chunk in chunks {
                    let checkpoint = try AuditCheckpoint(vehicle: vehicleID, seq: head.seq, headHash: head.hash, time: time.seconds,
                                                         timeTrusted: time.trusted, pruned: chunk).signed(with: key)
                    try AuditCheckpoints.store(checkpoint, connection: connection)
                    try transaction.enqueue(OutboxEntry(topic: topic, payload: Bytes(checkpoint.json.utf8), qos: 1,
                                                        priority: .accessEvent, sequence: head.seq))
                    last = checkpoint
                }
                return last
            }
        }
    }

    /// The newest locally kept checkpoints, newest first.
    public func auditCheckpoints(limit: Int = 100) throws(StorageError) -> [AuditCheckpoint] { try StorageError.wrap {
            try read { try AuditCheckpoints.recent(limit: limit, connection: $0.connection) }
        }
    }
}

enum AuditCheckpoints {
    /// Checkpoints kept in the local table; older ones are deleted as new ones are written.
    static let keepLocally: Int64 = 1000

    /// Gaps in the chained sequence after the previous checkpoint (or the chain's start) up to
    /// the head: events deleted since, which only pruning can do. A gap's lastHash is the
    /// prevHash of the event after it, or the head's hash when the gap reaches the head.
    /// Reads one small row per event since the previous checkpoint (a few minutes' worth).
    static func prunedRanges(through head: AuditChainHead, connection: Connection) throws -> [PrunedRange] {
        var cursor: Int64 = 0
        if case .integer(let seq)? = try connection.scalar("SELECT MAX(seq) FROM audit_checkpoints") { cursor = seq }
        if case .integer(let genesis)? = try connection.scalar("SELECT genesis_seq FROM audit_chain_head WHERE id = 1") {
            cursor = max(cursor, genesis)
        }
        let statement = try connection.prepare("SELECT seq, prev_hash FROM events WHERE seq > ?1 AND seq <= ?2 ORDER BY seq")
            .bind([.integer(cursor), .integer(head.seq)])
        var ranges = [PrunedRange]()
        var expected = cursor + 1
        while try statement.step() {
            let seq = statement.int64(0)
            if seq > expected, let prev = statement.blob(1) {
                ranges.append(PrunedRange(from: expected, to: seq - 1, lastHash: prev))
            }
            expected = seq + 1
        }
        if expected <= head.seq { ranges.append(PrunedRange(from: expected, to: head.seq, lastHash: head.hash)) }
        return ranges
    }

    static func store(_ checkpoint: AuditCheckpoint, connection: Connection) throws {
        try connection.run("INSERT INTO audit_checkpoints (seq, time_seconds, payload) VALUES (?1, ?2, ?3)",
                           [.integer(checkpoint.seq), .integer(checkpoint.time), .blob(Bytes(checkpoint.json.utf8))])
        try connection.run("DELETE FROM audit_checkpoints WHERE id <= (SELECT MAX(id) FROM audit_checkpoints) - ?1",
                           [.integer(keepLocally)])
    }

    static func recent(limit: Int, connection: Connection) throws -> [AuditCheckpoint] {
        try connection.rows("SELECT payload FROM audit_checkpoints ORDER BY id DESC LIMIT ?1", [.integer(Int64(max(0, limit)))])
            .compactMap { row in
                guard case .blob(let payload)? = row.first else { return nil }
                return AuditCheckpoint(json: payload)
            }
    }
}

// The durable outbox over the car's SQLite store: what CloudLink drains into the broker.
//
// Acknowledgements are buffered and deleted together (every `flushIntervalMillis` (50 ms), every
// `flushBatch` acks, or when someone asks for the depth), so a burst of PUBACKs costs one
// fsync, not one each. A crash before that flush only means the broker sees those messages
// again: delivery is at-least-once, and the cloud de-duplicates on the UUID in every publish.
// `acknowledgementFlushDue` tells the cloud thread when to flush while acks are buffered (and
// nothing while none are), so an idle link needs no timer for it.
import Protocol
import Synchronization

public final class SQLiteOutbox: OutboxStore, @unchecked Sendable {
    // @unchecked Sendable: `acknowledged` is behind its Mutex; the store is Sendable.
    public let store: CarStore
    private let acknowledged = Mutex<[Int64]>([])
    private let lastFlush = Mutex<UInt64>(0)
    /// When buffered acknowledgements must be flushed; nil while none are buffered. Changed
    /// only while holding `acknowledged` (lock order: acknowledged, then this).
    private let flushDue = Mutex<UInt64?>(nil)
    /// After a failed flush (a full disk, a busy database), the next attempt.
    public var flushRetryMillis: UInt64 = 1000
    public var flushIntervalMillis: UInt64 = 50
    public var flushBatch = 512

    public init(store: CarStore) {
        self.store = store
    }

    public func pending(afterID: Int64, limit: Int) throws(StorageError) -> [OutboxMessage] { try StorageError.wrap {
            let now = monotonicNow()
            let (count, due) = acknowledged.withLock { ids in (ids.count, ids.count >= flushBatch) }
            if due || (count > 0 && now >= lastFlush.withLock { $0 } + flushIntervalMillis) {
                try flushAcknowledgements()
                lastFlush.withLock { $0 = now }
            }
            let done = Set(acknowledged.withLock { $0 })
            let rows = try store.read { transaction in
                // A topic whose earliest waiting message was refused is held whole: per-topic order.
                try transaction.connection.rows("""
                    SELECT id, uuid, topic, payload, qos, retain, priority, sequence FROM outbox AS o
                    WHERE o.id > ?1 AND o.refused_code IS NULL
                      AND NOT EXISTS (SELECT 1 FROM outbox AS h
                                      WHERE h.topic = o.topic AND h.id < o.id AND h.refused_code IS NOT NULL)
                    ORDER BY o.id LIMIT ?2
                    """, [.integer(afterID), .integer(Int64(limit + done.count))]).compactMap(Self.message)
            }
            // Acknowledged but not yet deleted: never hand those out again.
            return Array(rows.lazy.filter { !done.contains($0.id) }.prefix(limit))
        }
    }

    public func acknowledge(id: Int64) throws(StorageError) { try StorageError.wrap {
            let interval = flushIntervalMillis
            acknowledged.withLock { ids in
                ids.append(id)
                flushDue.withLock { due in if due == nil { due = monotonicNow() + interval } }
            }
        }
    }

    /// When `flushAcknowledgements` should run (monotonic milliseconds); nil: nothing buffered.
    public var acknowledgementFlushDue: UInt64? { flushDue.withLock { $0 } }

    /// Deletes acknowledged messages and advances the published-events cursor, in one commit.
    public func flushAcknowledgements() throws(StorageError) { try StorageError.wrap {
            let ids = acknowledged.withLock { ids -> [Int64] in
                defer { ids.removeAll() }
                flushDue.withLock { $0 = nil }
                return ids
            }
            guard !ids.isEmpty else { return }
            do {
                try store.write { transaction in
                    let connection = transaction.connection
                    var highestEvent: Int64 = 0
                    for id in ids {
                        if case .integer(let seq)? = try connection.scalar(
                            "SELECT sequence FROM outbox WHERE id = ?1 AND priority IN (?2, ?3)",
                            [.integer(id), .integer(Int64(OutboxPriority.accessEvent.rawValue)), .integer(Int64(OutboxPriority.event.rawValue))]) {
                            highestEvent = max(highestEvent, seq)
                        }
                        try connection.run("DELETE FROM outbox WHERE id = ?1", [.integer(id)])
                    }
                    guard highestEvent > 0 else { return }
                    // Events below the oldest one still waiting have all reached the broker; with
                    // none waiting, every routed event has.
                    var through = try transaction.lastEventSequence()
                    if case .integer(let oldest)? = try connection.scalar(
                        "SELECT MIN(sequence) FROM outbox WHERE sequence > 0 AND priority IN (?1, ?2)",
                        [.integer(Int64(OutboxPriority.accessEvent.rawValue)), .integer(Int64(OutboxPriority.event.rawValue))]) {
                        through = oldest - 1
                    }
                    if through > (try transaction.eventsPublishedThrough()) {
                        try transaction.markEventsPublished(through: through)
                    }
                }
            } catch {
                // Keep them for the next flush rather than forget an acknowledgement.
                let retry = monotonicNow() + flushRetryMillis
                acknowledged.withLock { buffered in
                    buffered.insert(contentsOf: ids, at: 0)
                    flushDue.withLock { $0 = min($0 ?? retry, retry) }
                }
                throw error
            }
        }
    }

    public func recordRefusal(id: Int64, reasonCode: Int32, atMillis: UInt64) throws(StorageError) { try StorageError.wrap {
            try store.write { transaction in
                try transaction.connection.run("UPDATE outbox SET refused_code = ?1, refused_ms = ?2 WHERE id = ?3",
                                               [.integer(Int64(reasonCode)), .integer(wallMillis()), .integer(id)])
                try Self.setLastError(transaction, "broker refused message \(id) (reason 0x\(String(reasonCode, radix: 16)))")
            }
        }
    }

    public func releaseRefusals() throws(StorageError) { try StorageError.wrap {
            try store.write { try $0.connection.run("UPDATE outbox SET refused_code = NULL WHERE refused_code IS NOT NULL") }
        }
    }

    public func depth() throws(StorageError) -> Int { try StorageError.wrap {
            try flushAcknowledgements()
            return try store.read { transaction in
                guard case .integer(let count)? = try transaction.connection.scalar("SELECT COUNT(*) FROM outbox") else { return 0 }
                return Int(count)
            }
        }
    }

    /// Depth, size, oldest age, refusals and the last error, for status displays.
    public func status(nowMillis: Int64 = wallMillis()) throws(StorageError) -> OutboxStatus { try StorageError.wrap {
            try flushAcknowledgements()
            return try store.read { transaction in
                let row = try transaction.connection.rows("""
                    SELECT COUNT(*), COALESCE(SUM(LENGTH(payload)), 0), MIN(enqueued_ms),
                           SUM(CASE WHEN refused_code IS NULL THEN 0 ELSE 1 END) FROM outbox
                    """).first ?? []
                func integer(_ index: Int) -> Int64? {
                    guard index < row.count, case .integer(let value) = row[index] else { return nil }
                    return value
                }
                var lastError: String? = nil
                if case .text(let text)? = try transaction.connection.scalar("SELECT value FROM outbox_status WHERE name = 'last_error'") {
                    lastError = text
                }
                return OutboxStatus(depth: Int(integer(0) ?? 0), bytes: integer(1) ?? 0,
                                    oldestAgeMillis: integer(2).map { max(0, nowMillis - $0) }, refused: Int(integer(3) ?? 0),
                                    lastError: lastError)
            }
        }
    }

    /// Remembers the cloud link's last error for `carkey-agent outbox` (no payloads in it).
    public func setLastError(_ message: String) throws(StorageError) { try StorageError.wrap {
            try store.write { try Self.setLastError($0, message) }
        }
    }

    public func nextBirthSequence() throws(StorageError) -> UInt64 { try StorageError.wrap {
            try store.write { try $0.nextBirthSequence() }
        }
    }

    private static func setLastError(_ transaction: StoreTransaction, _ message: String) throws {
        try transaction.connection.run("INSERT OR REPLACE INTO outbox_status (name, value) VALUES ('last_error', ?1)",
                                       [.text(String(message.prefix(300)))])
    }

    private static func message(_ row: [SQLiteValue]) -> OutboxMessage? {
        guard row.count == 8, case .integer(let id) = row[0], case .text(let uuid) = row[1], case .text(let topic) = row[2],
              case .blob(let payload) = row[3], case .integer(let qos) = row[4], case .integer(let retain) = row[5],
              case .integer(let priority) = row[6], case .integer(let sequence) = row[7],
              let level = OutboxPriority(rawValue: Int32(priority)) else { return nil }
        return OutboxMessage(id: id, uuid: uuid, topic: topic, payload: payload, qos: Int32(qos), retain: retain == 1,
                             priority: level, sequence: sequence)
    }
}

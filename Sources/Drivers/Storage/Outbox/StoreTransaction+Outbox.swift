// Outbox operations inside a store transaction, so an event and its outbox row (or a command
// result and the state it changed) commit together.
#if canImport(Glibc)
import Glibc
#endif
import Protocol

extension StoreTransaction {
    /// Adds `entry` to the outbox and returns its ID. A state report with a coalesce key first
    /// removes older unsent reports with the same key. Then, while the outbox is over `budget`,
    /// the oldest droppable messages (state reports, then plain events) are shed; command
    /// results and access events are never dropped, even over budget.
    @discardableResult
    public func enqueue(_ entry: OutboxEntry, budget: OutboxBudget? = OutboxBudget(), nowMillis: Int64 = wallMillis()) throws(StorageError) -> Int64 { try StorageError.wrap {
            // The cloud link turns the stored number into an MQTT QoS; only 0, 1 and 2 exist.
            guard (0...2).contains(entry.qos) else { throw StorageError.invalidArgument("outbox QoS \(entry.qos) (expected 0, 1 or 2)") }
            if let key = entry.coalesceKey {
                try connection.run("DELETE FROM outbox WHERE coalesce_key = ?1", [.text(key)])
            }
            let uuid = try entry.uuid ?? UUIDv4.make(random: randomSource)
            try connection.run("""
                INSERT INTO outbox (uuid, topic, payload, qos, retain, priority, sequence, coalesce_key, enqueued_ms)
                VALUES (?1, ?2, ?3, ?4, ?5, ?6, ?7, ?8, ?9)
                """, [.text(uuid), .text(entry.topic), .blob(entry.payload), .integer(Int64(entry.qos)), .integer(entry.retain ? 1 : 0),
                      .integer(Int64(entry.priority.rawValue)), .integer(entry.sequence),
                      entry.coalesceKey.map { .text($0) } ?? .null, .integer(nowMillis)])
            let id = connection.lastInsertRowID
            enqueuedOutbox = true
            if let budget { try shed(toFit: budget) }
            return id
        }
    }

    /// Sheds droppable messages, oldest and least important first, until the outbox fits.
    public func shed(toFit budget: OutboxBudget) throws(StorageError) { try StorageError.wrap {
            guard case .integer(var total)? = try connection.scalar("SELECT bytes FROM outbox_size WHERE id = 1"),
                  total > budget.maxBytes else { return }
            let droppable = try connection.rows("""
                SELECT id, LENGTH(payload) FROM outbox WHERE priority >= ?1 ORDER BY priority DESC, id ASC
                """, [.integer(Int64(OutboxPriority.event.rawValue))])
            for row in droppable where total > budget.maxBytes {
                guard case .integer(let id) = row[0], case .integer(let size) = row[1] else { continue }
                try connection.run("DELETE FROM outbox WHERE id = ?1", [.integer(id)])
                total -= size
            }
        }
    }

    /// Messages waiting in the outbox.
    public func outboxDepth() throws(StorageError) -> Int { try StorageError.wrap {
            guard case .integer(let count)? = try connection.scalar("SELECT COUNT(*) FROM outbox") else { return 0 }
            return Int(count)
        }
    }

    /// Records an inbound message UUID; false when it was seen before (a duplicate to ignore).
    /// Keeps the newest `keep` UUIDs. Call it in the transaction that records the message's
    /// answer (after its effect), so a message is never marked seen without having been handled.
    public func markInboundSeen(_ uuid: String, keep: Int = 4096) throws(StorageError) -> Bool { try StorageError.wrap {
            try connection.run("INSERT OR IGNORE INTO inbound_seen (uuid) VALUES (?1)", [.text(uuid)])
            let fresh = connection.changes == 1
            if fresh {
                try connection.run("DELETE FROM inbound_seen WHERE n <= (SELECT MAX(n) FROM inbound_seen) - ?1", [.integer(Int64(keep))])
            }
            return fresh
        }
    }

    /// True when `uuid` was recorded by `markInboundSeen` (and is still in its window).
    public func inboundSeen(_ uuid: String) throws(StorageError) -> Bool { try StorageError.wrap {
            try connection.scalar("SELECT EXISTS (SELECT 1 FROM inbound_seen WHERE uuid = ?1)", [.text(uuid)]) == .integer(1)
        }
    }

    /// The next birth number (1, 2, 3, ... across restarts), for the presence messages.
    public func nextBirthSequence() throws(StorageError) -> UInt64 { try StorageError.wrap {
            UInt64(try nextCounter("birth_seq"))
        }
    }

    /// Increments the named monotone counter (created at 0 on first use) and returns it.
    public func nextCounter(_ name: String) throws(StorageError) -> Int64 { try StorageError.wrap {
            try connection.run("INSERT OR IGNORE INTO counters (name, value) VALUES (?1, 0)", [.text(name)])
            try connection.run("UPDATE counters SET value = value + 1 WHERE name = ?1", [.text(name)])
            guard case .integer(let value)? = try connection.scalar("SELECT value FROM counters WHERE name = ?1", [.text(name)]) else {
                throw StorageError.invalidArgument("counter \(name) missing")
            }
            return value
        }
    }
}

/// Wall-clock milliseconds since 1970 (for outbox ages only; never for security decisions).
public func wallMillis() -> Int64 {
    var ts = timespec()
    clock_gettime(CLOCK_REALTIME, &ts)
    return Int64(ts.tv_sec) * 1000 + Int64(ts.tv_nsec) / 1_000_000
}

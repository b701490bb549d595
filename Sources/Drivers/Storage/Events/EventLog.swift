// The event log's SQL, run inside a caller's transaction. The sequence number comes from the
// `event_seq` counter, bumped in the same transaction as the insert: a rolled-back append takes
// no number, a committed one takes the next, and a trim never lowers the counter. The only
// deletion is `trim`, and a trigger refuses to delete anything not yet published.
import CSQLite
import Protocol

enum EventLog {
    static func append(_ event: NewEvent, connection: Connection, random: RandomSource) throws -> StoredEvent {
        try event.validate()
        if let detail = event.detailJSON {
            guard try connection.scalar("SELECT json_valid(?1)", [.text(detail)]) == .integer(1) else {
                throw StorageError.invalidArgument("event detail is not valid JSON")
            }
        }
        // A savepoint makes the counter bump and the insert one step even inside a caller's
        // larger transaction: a failed append that the caller catches leaves no gap.
        try connection.execute("SAVEPOINT append_event")
        do {
            let stored = try insert(event, connection: connection, random: random)
            try connection.execute("RELEASE append_event")
            return stored
        } catch {
            if connection.inTransaction { try? connection.execute("ROLLBACK TO append_event; RELEASE append_event") }
            throw error
        }
    }

    private static func insert(_ event: NewEvent, connection: Connection, random: RandomSource) throws -> StoredEvent {
        let seq = try counter("event_seq", connection) + 1
        try connection.run("UPDATE counters SET value = ?1 WHERE name = 'event_seq'", [.integer(seq)])
        let uuid = try UUIDv4.make(random: random)
        // One SHA-256 and one one-row update per event: cheap enough for the group-commit path.
        let link = try ChainHead.read(connection).map { EventCanonical.link(seq: seq, uuid: uuid, event: event, prevHash: $0.hash) }
        var values: [SQLiteValue] = [
            .integer(seq), .text(uuid), .integer(event.time.seconds), .integer(event.time.trusted ? 1 : 0),
            .text(event.kind.rawValue), event.actor.map { .text($0) } ?? .null, .text(event.action), .text(event.result),
            event.fault?.code.map { .integer($0) } ?? .null, event.fault.map { .text($0.name) } ?? .null,
            event.detailJSON.map { .text($0) } ?? .null,
        ]
        if let link {
            values += [.blob(link.prevHash), .blob(link.hash)]
            try connection.run("""
                INSERT INTO events (seq, uuid, time_seconds, time_trusted, kind, actor, action, result, fault_code, fault_name, detail,
                                    prev_hash, hash)
                VALUES (?1, ?2, ?3, ?4, ?5, ?6, ?7, ?8, ?9, ?10, ?11, ?12, ?13)
                """, values)
            try ChainHead.advance(seq: seq, hash: link.hash, connection)
        } else {
            // A database not yet upgraded to the chain (only tests append to one): unchained row.
            try connection.run("""
                INSERT INTO events (seq, uuid, time_seconds, time_trusted, kind, actor, action, result, fault_code, fault_name, detail)
                VALUES (?1, ?2, ?3, ?4, ?5, ?6, ?7, ?8, ?9, ?10, ?11)
                """, values)
        }
        return StoredEvent(seq: seq, uuid: uuid, event: event, chain: link)
    }

    /// Events with a sequence number greater than `since`, oldest first, at most `limit`.
    static func events(since: Int64, limit: Int, connection: Connection) throws -> [StoredEvent] {
        let statement = try connection.prepare("""
            SELECT seq, uuid, time_seconds, time_trusted, kind, actor, action, result, fault_code, fault_name, detail,
                   prev_hash, hash
            FROM events WHERE seq > ?1 ORDER BY seq LIMIT ?2
            """).bind([.integer(since), .integer(Int64(max(0, limit)))])
        var out = [StoredEvent]()
        while try statement.step() {
            // The schema's NOT NULL and CHECK constraints make the fallbacks unreachable for files
            // this code wrote; a hand-edited kind is shown as "unknown" rather than dropped.
            let kind = statement.text(4).flatMap { EventKind(rawValue: $0) } ?? .unknown
            let fault = statement.text(9).map { EventFault(code: statement.isNull(8) ? nil : statement.int64(8), name: $0) }
            let event = NewEvent(kind: kind, time: EventTime(seconds: statement.int64(2), trusted: statement.int64(3) != 0),
                                 actor: statement.text(5), action: EventAction(stored: statement.text(6) ?? ""), result: statement.text(7) ?? "",
                                 fault: fault, detailJSON: statement.text(10))
            var chain: EventChainLink?
            if let prev = statement.blob(11), let hash = statement.blob(12) { chain = EventChainLink(prevHash: prev, hash: hash) }
            out.append(StoredEvent(seq: statement.int64(0), uuid: statement.text(1) ?? "", event: event, chain: chain))
        }
        return out
    }

    /// The sequence number of the last event ever appended (0 before the first).
    static func lastSequence(_ connection: Connection) throws -> Int64 { try counter("event_seq", connection) }

    static func publishedThrough(_ connection: Connection) throws -> Int64 { try counter("events_published", connection) }

    /// The highest event sequence handed to an outbox router (0 when none ever was).
    static func routedThrough(_ connection: Connection) throws -> Int64 {
        guard case .integer(let value)? = try connection.scalar("SELECT value FROM counters WHERE name = 'events_routed'") else { return 0 }
        return value
    }

    static func markRouted(through seq: Int64, connection: Connection) throws {
        try connection.run("""
            INSERT INTO counters (name, value) VALUES ('events_routed', ?1)
            ON CONFLICT (name) DO UPDATE SET value = excluded.value WHERE excluded.value > counters.value
            """, [.integer(seq)])
    }

    /// Moves the published cursor forward to `seq` (never backwards, never past the last event).
    static func markPublished(through seq: Int64, connection: Connection) throws {
        let target = min(seq, try lastSequence(connection))
        try connection.run("UPDATE counters SET value = ?1 WHERE name = 'events_published' AND value < ?1", [.integer(target)])
    }

    /// Deletes the oldest events beyond the newest `keep`, but only published ones. Returns how
    /// many were deleted. The sequence counter is untouched, so numbers are never reused.
    static func trim(keepingLatest keep: Int, connection: Connection) throws -> Int {
        let last = try lastSequence(connection)
        let bound = min(try publishedThrough(connection), last - Int64(max(0, keep)))
        guard bound > 0 else { return 0 }
        try connection.run("DELETE FROM events WHERE seq <= ?1", [.integer(bound)])
        return connection.changes
    }

    private static func counter(_ name: String, _ connection: Connection) throws -> Int64 {
        guard case .integer(let value)? = try connection.scalar("SELECT value FROM counters WHERE name = ?1", [.text(name)]) else {
            throw SQLiteError(code: SQLITE_CORRUPT, message: "counter \(name) missing", operation: "read counter")
        }
        return value
    }
}

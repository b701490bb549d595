// What a transaction on the store can do: sealed records, events and trusted time, all applied
// together or not at all. Handed to the body of `CarStore.write` / `CarStore.read`; it must not
// be kept after the body returns.
import Protocol

/// One sealed record that opened successfully.
public struct SealedRecord: Equatable, Sendable {
    public let id: Bytes
    public let payload: Bytes
}

/// The result of listing a kind: the records that opened, and the IDs of those that did not
/// (already reported as tamper events; never use them).
public struct RecordListing: Equatable, Sendable {
    public let records: [SealedRecord]
    public let tampered: [Bytes]
}

public final class StoreTransaction {
    let connection: Connection
    private let sealer: RecordSealer
    private let random: RandomSource
    var randomSource: RandomSource { random }
    /// Tampered rows seen in this transaction; the store reports them after it ends, so a
    /// rollback cannot swallow the report.
    private(set) var findings: [TamperFinding] = []
    /// Set by writes security depends on (keychain rows, the identity, critical events): when
    /// such a transaction meets a full disk, the store may spend its reserve on it.
    private(set) var securityCritical = false
    /// Set by `enqueue`: the store tells its OutboxObserver once this transaction commits.
    var enqueuedOutbox = false

    /// Maps each appended event to its outbox message (set by the cloud link), or nil.
    private let router: (any EventRouter)?

    init(connection: Connection, sealer: RecordSealer, random: RandomSource, router: (any EventRouter)? = nil) {
        self.connection = connection
        self.sealer = sealer
        self.random = random
        self.router = router
    }

    // MARK: Sealed records

    /// Inserts or replaces the record (`kind`, `id`) with `payload`, sealed under a fresh nonce.
    public func put(_ payload: Bytes, kind: RecordKind, id: Bytes) throws(StorageError) { try StorageError.wrap {
            let sealed = try sealer.seal(payload, kind: kind, id: id, random: random)
            if kind != .keyActivity { securityCritical = true }
            try connection.run("INSERT OR REPLACE INTO sealed_records (kind, id, sealed) VALUES (?1, ?2, ?3)",
                               [.text(kind.rawValue), .blob(id), .blob(sealed)])
        }
    }

    /// The payload, nil when there is no such record, or `StorageError.tampered` when the row
    /// fails authentication.
    public func get(kind: RecordKind, id: Bytes) throws(StorageError) -> Bytes? { try StorageError.wrap {
            try RecordSealer.validate(id: id)
            let value = try connection.scalar("SELECT sealed FROM sealed_records WHERE kind = ?1 AND id = ?2",
                                              [.text(kind.rawValue), .blob(id)])
            guard let value else { return nil }
            return try open(value, kind: kind, id: id)
        }
    }

    /// Deletes the record; true when it existed.
    @discardableResult
    public func delete(kind: RecordKind, id: Bytes) throws(StorageError) -> Bool { try StorageError.wrap {
            try RecordSealer.validate(id: id)
            try connection.run("DELETE FROM sealed_records WHERE kind = ?1 AND id = ?2", [.text(kind.rawValue), .blob(id)])
            return connection.changes > 0
        }
    }

    /// Every record of `kind` ordered by ID; tampered rows are left out and listed separately.
    public func list(kind: RecordKind) throws(StorageError) -> RecordListing { try StorageError.wrap {
            let statement = try connection.prepare("SELECT id, sealed FROM sealed_records WHERE kind = ?1 ORDER BY id")
                .bind([.text(kind.rawValue)])
            var records = [SealedRecord]()
            var tampered = [Bytes]()
            while try statement.step() {
                let id = statement.blob(0) ?? []
                do {
                    records.append(SealedRecord(id: id, payload: try open(statement.value(1), kind: kind, id: id)))
                } catch StorageError.tampered {
                    tampered.append(id)
                }
            }
            return RecordListing(records: records, tampered: tampered)
        }
    }

    /// Opens a stored value; anything but an authentic blob is recorded and thrown as tampered.
    private func open(_ value: SQLiteValue, kind: RecordKind, id: Bytes) throws -> Bytes {
        do {
            // A value edited into another type (text, integer, NULL) is tampering as well.
            guard case .blob(let sealed) = value else { throw StorageError.tampered(kind: kind, id: id) }
            return try sealer.open(sealed, kind: kind, id: id)
        } catch StorageError.tampered(let kind, let id) {
            findings.append(TamperFinding(kind: kind, id: id, value: value))
            throw StorageError.tampered(kind: kind, id: id)
        }
    }

    // MARK: Events

    /// Appends an audit event and returns it with its sequence number and UUID.
    @discardableResult
    public func appendEvent(_ event: NewEvent) throws(StorageError) -> StoredEvent { try StorageError.wrap {
            if EventRetention.of(event) == .critical { securityCritical = true }
            let stored = try EventLog.append(event, connection: connection, random: random)
            // Same transaction: an event is never logged without its outbox row, or the reverse.
            if let router {
                if let entry = router.route(stored) { try enqueue(entry) }
                try EventLog.markRouted(through: stored.seq, connection: connection)
            }
            return stored
        }
    }

    /// Queues the events appended while nothing routed them (above the routed and published
    /// marks), oldest first, skipping any that already have a row.
    func routeUnroutedEvents() throws {
        guard let router else { return }
        var since = max(try EventLog.routedThrough(connection), try eventsPublishedThrough())
        while true {
            let batch = try events(since: since, limit: 256)
            guard let last = batch.last else { break }
            for stored in batch {
                guard let entry = router.route(stored),
                      try connection.scalar("SELECT EXISTS (SELECT 1 FROM outbox WHERE uuid = ?1)", [.text(entry.uuid ?? "")]) != .integer(1)
                else { continue }
                try enqueue(entry)
            }
            since = last.seq
        }
        try EventLog.markRouted(through: try lastEventSequence(), connection: connection)
    }

    /// Events with seq > `since` (exclusive; 0 = from the start), oldest first, at most `limit`.
    public func events(since: Int64, limit: Int) throws(StorageError) -> [StoredEvent] { try StorageError.wrap {
            try EventLog.events(since: since, limit: limit, connection: connection)
        }
    }

    /// The last sequence number handed out (0 before the first event); survives trims.
    public func lastEventSequence() throws(StorageError) -> Int64 { try StorageError.wrap { try EventLog.lastSequence(connection) } }

    /// The cursor below which events may be trimmed (the cloud link advances it).
    public func eventsPublishedThrough() throws(StorageError) -> Int64 { try StorageError.wrap { try EventLog.publishedThrough(connection) } }

    public func markEventsPublished(through seq: Int64) throws(StorageError) { try StorageError.wrap { try EventLog.markPublished(through: seq, connection: connection) } }

    /// Retention: deletes published events older than the newest `keep`; returns the count.
    @discardableResult
    public func trimEvents(keepingLatest keep: Int) throws(StorageError) -> Int { try StorageError.wrap { try EventLog.trim(keepingLatest: keep, connection: connection) } }

    // MARK: Trusted time

    /// The trusted-time high-water mark in seconds since 1970, nil before the first.
    public func trustedTime() throws(StorageError) -> Int64? { try StorageError.wrap { try TrustedTimeMark.current(connection) } }

    /// Raises the mark to `seconds` if later; returns the mark now in force.
    @discardableResult
    public func advanceTrustedTime(to seconds: Int64) throws(StorageError) -> Int64 { try StorageError.wrap {
            try TrustedTimeMark.advance(to: seconds, connection: connection)
        }
    }
}

/// A row that failed to open, identified well enough to report it once.
struct TamperFinding: Hashable, Sendable {
    let kind: RecordKind
    let id: Bytes
    /// SHA-256 of the stored value, so the same damage is reported once per process, and a
    /// further change to the row is reported again.
    let digest: Bytes

    init(kind: RecordKind, id: Bytes, value: SQLiteValue) {
        self.kind = kind
        self.id = id
        let tag: UInt8
        let content: Bytes
        switch value {
        case .null: (tag, content) = (0, [])
        case .integer(let number): (tag, content) = (1, withUnsafeBytes(of: number.bigEndian) { Bytes($0) })
        case .text(let text): (tag, content) = (2, Bytes(text.utf8))
        case .blob(let bytes): (tag, content) = (3, bytes)
        }
        digest = SHA256.hash([tag] + content)
    }
}

// The store's schema as an ordered list of migrations. Append new steps at the end (the MQTT
// outbox will be version 2); never edit a step that has shipped.

enum StoreSchema {
    /// "OCK1" as a big-endian integer, written to PRAGMA application_id.
    static let applicationID: Int32 = 0x4F43_4B31

    static let schema = Schema(applicationID: applicationID, migrations: [
        Migration("sealed records, event log, trusted time", sql: version1),
        Migration("MQTT outbox, inbound de-duplication, birth counter", sql: OutboxSchema.version2),
        Migration("store budget: pruning permit and counters", sql: BudgetSchema.version3),
        AuditSchema.migration, // version 4: audit chain (Storage/Audit/AuditSchema.swift)
    ])

    private static let version1 = """
        -- Every key, share, revocation and the identity key: opaque payloads sealed with
        -- AES-256-GCM under the storage key, associated data = kind || id.
        CREATE TABLE sealed_records (
            kind   TEXT NOT NULL,
            id     BLOB NOT NULL,
            sealed BLOB NOT NULL,
            PRIMARY KEY (kind, id)
        ) WITHOUT ROWID;

        -- Named monotone counters: the event sequence (never reused, also after a trim) and
        -- the cursor up to which events have been published.
        CREATE TABLE counters (
            name  TEXT PRIMARY KEY,
            value INTEGER NOT NULL
        ) WITHOUT ROWID;
        INSERT INTO counters (name, value) VALUES ('event_seq', 0), ('events_published', 0);
        CREATE TRIGGER counters_only_grow BEFORE UPDATE ON counters
        WHEN new.value < old.value OR new.name <> old.name
        BEGIN SELECT RAISE(ABORT, 'counters only grow'); END;

        -- The append-only audit log.
        CREATE TABLE events (
            seq          INTEGER PRIMARY KEY,
            uuid         TEXT NOT NULL UNIQUE,
            time_seconds INTEGER NOT NULL,
            time_trusted INTEGER NOT NULL CHECK (time_trusted IN (0, 1)),
            kind         TEXT NOT NULL,
            actor        TEXT,
            action       TEXT NOT NULL,
            result       TEXT NOT NULL,
            fault_code   INTEGER,
            fault_name   TEXT,
            detail       TEXT -- JSON, checked on append (trusted_schema=OFF forbids json_valid here)
        );
        CREATE TRIGGER events_append_only BEFORE UPDATE ON events
        BEGIN SELECT RAISE(ABORT, 'events are append-only'); END;
        CREATE TRIGGER events_keep_unpublished BEFORE DELETE ON events
        WHEN old.seq > (SELECT value FROM counters WHERE name = 'events_published')
        BEGIN SELECT RAISE(ABORT, 'unpublished events cannot be deleted'); END;

        -- The trusted-time high-water mark: one row, only ever moved forward.
        CREATE TABLE trusted_time (
            id      INTEGER PRIMARY KEY CHECK (id = 1),
            seconds INTEGER NOT NULL
        );
        CREATE TRIGGER trusted_time_only_forward BEFORE UPDATE ON trusted_time
        WHEN new.seconds < old.seconds
        BEGIN SELECT RAISE(IGNORE); END;
        """
}

// Schema version 2: the durable MQTT outbox, inbound de-duplication and the birth counter.
// Lives in the same database as the event log so an event and its outbox row commit together.

enum OutboxSchema {
    static let version2 = """
        CREATE TABLE outbox (
            id           INTEGER PRIMARY KEY AUTOINCREMENT,  -- enqueue order, never reused
            uuid         TEXT NOT NULL UNIQUE,
            topic        TEXT NOT NULL,
            payload      BLOB NOT NULL,
            qos          INTEGER NOT NULL CHECK (qos IN (0, 1, 2)),
            retain       INTEGER NOT NULL CHECK (retain IN (0, 1)),
            priority     INTEGER NOT NULL,
            sequence     INTEGER NOT NULL,
            coalesce_key TEXT,                               -- state reports: newest supersedes
            enqueued_ms  INTEGER NOT NULL,                   -- wall clock, for "oldest age"
            refused_code INTEGER,                            -- last broker refusal (v5 reason)
            refused_ms   INTEGER
        );
        CREATE INDEX outbox_by_topic ON outbox (topic, id);
        -- Refused messages hold their topic; this keeps that check O(log n) per row.
        CREATE INDEX outbox_refused ON outbox (topic, id) WHERE refused_code IS NOT NULL;

        -- Payload bytes waiting, kept by triggers so the disk budget check is O(1).
        CREATE TABLE outbox_size (
            id    INTEGER PRIMARY KEY CHECK (id = 1),
            bytes INTEGER NOT NULL
        );
        INSERT INTO outbox_size (id, bytes) VALUES (1, 0);
        CREATE TRIGGER outbox_size_insert AFTER INSERT ON outbox
        BEGIN UPDATE outbox_size SET bytes = bytes + LENGTH(new.payload) WHERE id = 1; END;
        CREATE TRIGGER outbox_size_delete AFTER DELETE ON outbox
        BEGIN UPDATE outbox_size SET bytes = bytes - LENGTH(old.payload) WHERE id = 1; END;
        CREATE INDEX outbox_by_coalesce ON outbox (coalesce_key) WHERE coalesce_key IS NOT NULL;

        -- Inbound message UUIDs already handled (the newest N are kept).
        CREATE TABLE inbound_seen (
            n    INTEGER PRIMARY KEY AUTOINCREMENT,
            uuid TEXT NOT NULL UNIQUE
        );

        CREATE TABLE outbox_status (
            name  TEXT PRIMARY KEY,
            value TEXT NOT NULL
        ) WITHOUT ROWID;

        INSERT INTO counters (name, value) VALUES ('birth_seq', 0);
        """
}

// The schema step for the audit chain. Like the budget step it is O(1) in the size of the log:
// adding nullable columns rewrites no row, and existing rows are NOT hashed (rehashing would
// rewrite the whole log, which a board with a full disk cannot afford, and the append-only
// trigger forbids it). The chain starts at the first event appended after the upgrade, with
// `EventChainLink.genesis` as its prevHash; older rows stay unchained (no hash columns).
// Pruned events are found when a checkpoint is written, as gaps in the sequence since the
// previous one: no trigger writes anything while the budget deletes rows to make room.

enum AuditSchema {
    static let migration = Migration("audit chain: event hashes, chain head, pruned links, checkpoints", sql: sql)

    static let sql = """
        ALTER TABLE events ADD COLUMN prev_hash BLOB;
        ALTER TABLE events ADD COLUMN hash BLOB;

        -- The hash the next event links to. Kept apart from the events table so pruning (which
        -- may delete every row) never loses it; one row, updated with every append.
        -- genesis_seq: the event counter at upgrade time; the chain starts after it.
        CREATE TABLE audit_chain_head (
            id          INTEGER PRIMARY KEY CHECK (id = 1),
            seq         INTEGER NOT NULL,
            hash        BLOB NOT NULL CHECK (length(hash) = 32),
            genesis_seq INTEGER NOT NULL
        );
        INSERT INTO audit_chain_head (id, seq, hash, genesis_seq)
            SELECT 1, value, zeroblob(32), value FROM counters WHERE name = 'event_seq';

        -- Signed checkpoints as published, newest kept (AuditCheckpoints.keepLocally).
        CREATE TABLE audit_checkpoints (
            id           INTEGER PRIMARY KEY,
            seq          INTEGER NOT NULL,
            time_seconds INTEGER NOT NULL,
            payload      BLOB NOT NULL
        );
        """
}

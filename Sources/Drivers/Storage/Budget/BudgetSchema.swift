// Schema version 3: what the store budget needs. Every statement is O(1) in the size of the
// log (no index over existing rows, no rewrite), so the upgrade also runs on a board whose
// disk is already full and whose log is large.

enum BudgetSchema {
    static let version3 = """
        -- The pruner may delete events not yet published, but only while this one-row table
        -- holds a row, which it inserts and removes inside its own transaction: no committed
        -- state ever has it, so anything else deleting an unpublished event is still refused.
        CREATE TABLE event_prune_permit (id INTEGER PRIMARY KEY CHECK (id = 1));
        DROP TRIGGER events_keep_unpublished;
        CREATE TRIGGER events_keep_unpublished BEFORE DELETE ON events
        WHEN old.seq > (SELECT value FROM counters WHERE name = 'events_published')
         AND NOT EXISTS (SELECT 1 FROM event_prune_permit)
        BEGIN SELECT RAISE(ABORT, 'unpublished events cannot be deleted'); END;

        -- What pruning removed, per retention class, and how many of those were unpublished.
        INSERT OR IGNORE INTO counters (name, value) VALUES
            ('pruned_noise', 0), ('pruned_ordinary', 0), ('pruned_critical', 0), ('pruned_unpublished', 0);
        """
}

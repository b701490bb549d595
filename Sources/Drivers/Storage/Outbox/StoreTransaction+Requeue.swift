// Queues events from the log again, exactly as they were first queued, for the cloud's
// `resendEvents` request (docs/cloud.md, "Inbound envelope"). The caller passes the router
// (the one that queued them the first time), so Storage names no MQTT type.

extension StoreTransaction {
    /// Routes every event still held in the log with a sequence number in `range` through
    /// `router` and queues the entry: same topic, payload, UUID, QoS, priority and sequence as
    /// the first publication, so the cloud de-duplicates it by UUID. Events trimmed from the
    /// log are skipped. An event whose row still waits in the outbox is replaced by the new row
    /// (the UUID is unique there): a row whose acknowledgement is buffered but not yet flushed
    /// would otherwise be deleted by that flush without being sent again. Returns how many
    /// rows were queued.
    @discardableResult
    public func requeueEvents(_ range: ClosedRange<Int64>, router: any EventRouter) throws(StorageError) -> Int { try StorageError.wrap {
            var since = range.lowerBound - 1
            var queued = 0
            while since < range.upperBound {
                let batch = try events(since: since, limit: Int(min(256, range.upperBound - since)))
                guard let last = batch.last else { break }
                for stored in batch where stored.seq <= range.upperBound {
                    guard let entry = router.route(stored) else { continue }
                    if let uuid = entry.uuid {
                        try connection.run("DELETE FROM outbox WHERE uuid = ?1", [.text(uuid)])
                    }
                    try enqueue(entry)
                    queued += 1
                }
                since = last.seq
            }
            return queued
        }
    }
}

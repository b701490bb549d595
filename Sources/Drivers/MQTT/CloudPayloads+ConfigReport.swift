// The car's answer to configuration documents: one retained message on
// vehicles/{id}/config/reported (docs/cloud.md "Configuration (desired/reported)").
import Protocol

extension StoreTransaction {
    /// Queues a config report (retained, QoS 1) with `fields` after the common id/seq/time
    /// header, replacing any unsent older report: only the newest outcome matters to the
    /// shadow. Queued at command-result priority, so a full outbox never sheds it.
    @discardableResult
    public func enqueueConfigReport(_ fields: [(String, JSONValue)], topics: CloudTopics, time: EventTime) throws -> Int64 {
        let sequence = try nextCounter("config_report_seq")
        let uuid = try UUIDv4.make(random: randomSource)
        let payload = JSONValue.object([
            ("id", .string(uuid)), ("seq", .integer(sequence)), ("time", .integer(time.seconds)), ("timeTrusted", .bool(time.trusted)),
        ] + fields)
        return try enqueue(OutboxEntry(topic: topics.configReported, payload: payload.bytes, qos: 1, retain: true,
                                       priority: .commandResult, sequence: sequence, uuid: uuid, coalesceKey: topics.configReported))
    }
}

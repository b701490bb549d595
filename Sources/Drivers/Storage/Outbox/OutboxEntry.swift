// A message on its way into the outbox, before it has an ID.
import Protocol

public struct OutboxEntry: Sendable, Equatable {
    public var topic: String
    public var payload: Bytes
    public var qos: Int32
    public var retain: Bool
    public var priority: OutboxPriority
    /// The payload's `seq` (the event's, or the topic's own counter), sent again as the v5
    /// user property `seq`, so the two always agree; 0 if the payload has none.
    public var sequence: Int64
    /// A fixed identity (e.g. the event's UUID); nil draws a fresh UUIDv4.
    public var uuid: String?
    /// Entries with the same key replace older unsent ones (state reports); nil never coalesces.
    public var coalesceKey: String?

    public init(topic: String, payload: Bytes, qos: Int32, retain: Bool = false, priority: OutboxPriority,
                sequence: Int64 = 0, uuid: String? = nil, coalesceKey: String? = nil) {
        self.topic = topic
        self.payload = payload
        self.qos = qos
        self.retain = retain
        self.priority = priority
        self.sequence = sequence
        self.uuid = uuid
        self.coalesceKey = coalesceKey
    }
}

/// What `carkey-agent outbox` shows.
public struct OutboxStatus: Sendable, Equatable {
    public var depth: Int
    public var bytes: Int64
    /// Age of the oldest waiting message in milliseconds, nil when empty.
    public var oldestAgeMillis: Int64?
    public var refused: Int
    public var lastError: String?
}

/// Limits on the outbox's size on disk.
public struct OutboxBudget: Sendable, Equatable {
    /// Payload bytes kept at most before droppable messages are shed.
    public var maxBytes: Int64
    public init(maxBytes: Int64 = 16 << 20) { self.maxBytes = maxBytes }
}

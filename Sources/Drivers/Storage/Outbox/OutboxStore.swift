// The durable outbox's types, as the cloud link (Drivers/MQTT) sees them. They belong to
// Storage so the dependency runs one way: MQTT uses Storage, Storage never names an MQTT type.
// SQLiteOutbox is the real one; an in-memory one serves unit tests of the link's logic.

/// Delivery classes, highest first. Command results and access events are never dropped;
/// a newer state report supersedes an older one on the same topic.
public enum OutboxPriority: Int32, Sendable, CaseIterable {
    case commandResult = 0
    case accessEvent = 1
    case event = 2
    case stateReport = 3
}

public struct OutboxMessage: Sendable, Equatable {
    /// Position in the outbox: strictly increasing in enqueue order (the per-topic order).
    public var id: Int64
    /// The de-duplication identity the cloud sees (also a v5 user property).
    public var uuid: String
    public var topic: String
    public var payload: [UInt8]
    public var qos: Int32
    public var retain: Bool
    public var priority: OutboxPriority
    /// The payload's `seq` (the event log's seq for events), 0 if none; the user property `seq`.
    public var sequence: Int64

    public init(id: Int64, uuid: String, topic: String, payload: [UInt8], qos: Int32, retain: Bool,
                priority: OutboxPriority, sequence: Int64) {
        self.id = id
        self.uuid = uuid
        self.topic = topic
        self.payload = payload
        self.qos = qos
        self.retain = retain
        self.priority = priority
        self.sequence = sequence
    }
}

public protocol OutboxStore: AnyObject {
    /// Up to `limit` messages in id order with id > `afterID`, whose topic has no refused
    /// message waiting before them.
    func pending(afterID: Int64, limit: Int) throws -> [OutboxMessage]
    /// The broker acknowledged with a success reason code: the message is done.
    func acknowledge(id: Int64) throws
    /// The broker refused (v5 reason code >= 0x80): keep it, remember why, hold its topic.
    func recordRefusal(id: Int64, reasonCode: Int32, atMillis: UInt64) throws
    /// Clears refusal marks so held topics are retried (after a reconnect or a config change).
    func releaseRefusals() throws
    /// Number of messages waiting.
    func depth() throws -> Int
}

// The last retained message the broker acknowledged on each of the car's retained topics
// (state, config/reported): published again after a CONNACK without a session.
//
// Why: an ejabberd cluster keeps retained messages per node (its retained-topic index is not
// shared), and a node killed with -9 takes the car's session with it. A car that moves to the
// surviving node would leave that node without its state until the state next changed. A
// session-present 0 CONNACK (a new node, an expired session, a broker that lost its store) is
// the sign; the replay goes out before anything newer from the outbox, so the newest still wins.

public struct RetainedReplay: Sendable, Equatable {
    /// A car has a handful of retained topics; the bound only guards against a misconfiguration.
    public static let maxTopics = 8

    public struct Entry: Sendable, Equatable {
        public var topic: String
        public var payload: [UInt8]
        public var qos: MQTTQoS
        public var uuid: String
        public var sequence: Int64
    }

    /// Oldest acknowledgement first.
    public private(set) var entries: [Entry] = []

    public init() {}

    /// The broker accepted `message`: it is now the topic's retained value.
    public mutating func acknowledged(_ message: OutboxMessage) {
        guard message.retain, !message.payload.isEmpty else { return }
        entries.removeAll { $0.topic == message.topic }
        if entries.count >= Self.maxTopics { entries.removeFirst() }
        entries.append(Entry(topic: message.topic, payload: message.payload, qos: MQTTQoS(outbox: message.qos), uuid: message.uuid,
                             sequence: message.sequence))
    }

    /// What to publish again, given outbox messages still to send (`pending`, possibly only the
    /// first of them). A topic with a pending message is skipped: that one is newer (the
    /// acknowledged one left the outbox) and follows anyway. A newer one beyond `pending` is
    /// sent after the replay in the same connection, so the broker keeps the newer.
    public func replay(pending: [OutboxMessage]) -> [MQTTPublish] {
        let pendingTopics = Set(pending.map(\.topic))
        return entries.filter { !pendingTopics.contains($0.topic) }.map { entry in
            MQTTPublish(topic: entry.topic, payload: entry.payload, qos: entry.qos, retain: true,
                        userProperties: [MQTTUserProperty("uuid", entry.uuid), MQTTUserProperty("seq", String(entry.sequence))])
        }
    }
}

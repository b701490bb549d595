// Publishes signed audit-chain checkpoints (docs/cloud.md, "Audit chain and checkpoints"):
// every `interval` while events arrive, or sooner once `everyEvents` events were appended; and
// one last time on a clean stop. Events pruned in between are reported by the next checkpoint
// (the store finds the gaps), so nothing is lost by waiting. Each checkpoint is written to the store's table and the outbox in one transaction, so
// the cloud link publishes it like any other outbox message.
import Drivers
import Protocol

struct AuditCheckpointPolicy: Sendable, Equatable {
    /// The longest time between two checkpoints while events keep arriving.
    var intervalMillis: Int64 = 10 * 60 * 1000
    /// A checkpoint as soon as this many events were appended since the last one.
    var everyEvents: Int64 = 1000
}

final class AuditCheckpointer {
    private let store: CarStore
    private let key: any ProtocolSigner
    private let topics: CloudTopics
    private let clock: CarStore.EventClock
    private let policy: AuditCheckpointPolicy
    private var lastSeq: Int64?
    private var lastMillis: Int64?

    /// `key`: the car's identity key (`CarStore.loadOrCreateIdentityKey()`); `clock`: the
    /// agent's trusted-time source, so a checkpoint says whether its time can be believed.
    init(store: CarStore, key: any ProtocolSigner, topics: CloudTopics, clock: @escaping CarStore.EventClock,
         policy: AuditCheckpointPolicy = AuditCheckpointPolicy()) {
        self.store = store
        self.key = key
        self.topics = topics
        self.clock = clock
        self.policy = policy
    }

    /// Call from the loop (any cadence; a few times a minute is plenty). Returns the checkpoint
    /// it wrote, if one was due. The first tick after start only remembers the time, unless
    /// the head moved since the last checkpoint kept in the store.
    @discardableResult
    func tick(nowMillis: Int64) throws -> AuditCheckpoint? {
        guard let head = try store.auditChainHead(), head.hasEvents else { return nil }
        if lastSeq == nil { lastSeq = try store.auditCheckpoints(limit: 1).first?.seq ?? 0 }
        if lastMillis == nil { lastMillis = nowMillis }
        let advanced = head.seq - (lastSeq ?? 0)
        let due = advanced >= policy.everyEvents
            || (advanced > 0 && nowMillis - (lastMillis ?? nowMillis) >= policy.intervalMillis)
        guard due else { return nil }
        return try checkpoint(nowMillis: nowMillis)
    }

    /// A last checkpoint on a clean stop (before the cloud link drains its outbox), when the
    /// head moved since the last one.
    @discardableResult
    func shutdown(nowMillis: Int64) throws -> AuditCheckpoint? {
        guard let head = try store.auditChainHead(), head.hasEvents else { return nil }
        let last = try lastSeq ?? store.auditCheckpoints(limit: 1).first?.seq ?? 0
        guard head.seq > last else { return nil }
        return try checkpoint(nowMillis: nowMillis)
    }

    /// A checkpoint of the current head at once, asked for by an operator (`carkey-agent
    /// checkpoint`): checkpoints are not retained on the broker, so a verifier that starts
    /// listening later needs a fresh one to cover what it hears. Written even when the head has
    /// not moved (the same seq, a new time and signature); nil before the first event.
    func now(nowMillis: Int64) throws -> AuditCheckpoint? {
        try checkpoint(nowMillis: nowMillis)
    }

    private func checkpoint(nowMillis: Int64) throws -> AuditCheckpoint? {
        let written = try store.writeAuditCheckpoint(key: key, vehicleID: topics.vehicleID, topic: topics.audit, time: clock())
        if let written { lastSeq = written.seq }
        lastMillis = nowMillis
        return written
    }
}

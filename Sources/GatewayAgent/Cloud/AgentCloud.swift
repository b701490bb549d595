// The agent's side of the cloud link: starts the CloudService (its own thread), queues state
// reports when the vehicle state changes, and hands admitted inbound messages to the main loop.
import Drivers
import Protocol
import Synchronization

final class AgentCloud {
    private let service: CloudService
    private let store: CarStore
    private let topics: CloudTopics
    private let clock: AgentClock
    private let log: AgentLog
    /// Inbound messages admitted on the cloud thread, handled on the agent's thread.
    private let inbox: InboundMailbox
    private var lastReported: VehicleState?
    /// The nearest key's zone and distance last reported ("none" when no key is near).
    private var lastZone = "none"
    private var lastDistanceCentimetres: Int64?

    init(options: CloudOptions, vehicleID: VehicleID, store: CarStore, clock: AgentClock, log: AgentLog) throws {
        self.store = store
        self.topics = CloudTopics(vehicleID: vehicleID.description)
        self.clock = clock
        self.log = log
        let inbox = try InboundMailbox()
        self.inbox = inbox
        let connect = MQTTConnectOptions(endpoint: options.endpoint, clientID: vehicleID.description,
                                         keepaliveSeconds: options.keepaliveSeconds, tls: options.tls)
        service = try CloudService(options: connect, endpoints: options.endpoints, vehicleID: vehicleID.description, store: store,
                                   willDelaySeconds: options.willDelaySeconds, heartbeatSeconds: options.heartbeatSeconds,
                                   clock: clock.monotonicSource,
                                   onInbound: { message in
                                       // The shed message goes back to the service, whose gate forgets its ID.
                                       // Logged on the first shed and every 100th: a flood must not flood the log too.
                                       let shed = inbox.post(message)
                                       if let shed, inbox.shedCount % 100 == 1 {
                                           log.info("cloud: inbound mailbox full (\(InboundMailbox.capacity)), shed \(shed.type) message \(shed.id); "
                                                    + "\(inbox.shedCount) shed so far")
                                       }
                                       return shed
                                   }, log: { log.info($0) })
    }

    func start(initialState: VehicleState) throws(Errno) {
        log.info("cloud: link to \(topics.status.split(separator: "/").dropLast().joined(separator: "/")) starting")
        try service.start()
        report(initialState)
    }

    /// Queues a state report if the vehicle state changed (coalesced with any unsent one).
    func report(_ state: VehicleState, proximity: (zone: ProximityZone, metres: Double?)? = nil) {
        // The zone of the nearest key changes the report too; distance alone does not (it moves
        // every round and would flood the outbox).
        let zone = proximity.map { $0.zone == .outOfRange ? "none" : $0.zone.description }
        guard state != lastReported || (zone != nil && zone != lastZone) else { return }
        lastReported = state
        if let zone { lastZone = zone }
        if let proximity { lastDistanceCentimetres = proximity.metres.map(ProximityEvents.centimetres) }
        let snapshot = service.snapshot
        let now = clock.eventTime()
        let (zoneName, distance) = (lastZone, lastZone == "none" ? nil : lastDistanceCentimetres)
        do {
            try store.write { transaction in
                let outboxDepth = try transaction.outboxDepth()
                try transaction.enqueueStateReport(StateReport(vehicle: state, keyProximityZone: zoneName,
                                                               nearestKeyDistanceCentimetres: distance,
                                                               cloudConnected: snapshot.connected,
                                                               clockTrusted: now.trusted, outboxDepth: outboxDepth),
                                                   topics: topics, time: now)
            }
        } catch {
            log.info("cloud: state report not queued: \(error)")
        }
    }

    /// Queues the answer to a cloud request on vehicles/{id}/results: QoS 2, never dropped. The
    /// request's ID is recorded as handled in the same transaction (after its effect), so a
    /// stop or crash before this point leaves the cloud's retry admissible.
    ///
    /// `extra` adds fields to the payload (a remote command's UUID, action and state); `also`
    /// runs in the same transaction first (a remote command's UUID and event row), so the
    /// decision, its record and its answer are committed together or not at all. `extraFrom`
    /// adds fields computed in that transaction, after `also` (how many events it queued).
    func publishResult(requestID: String, type: String, result: String, fault: FaultCode?,
                       extra: [(String, JSONValue)] = [], also: ((StoreTransaction) throws -> Void)? = nil,
                       extraFrom: ((StoreTransaction) throws -> [(String, JSONValue)])? = nil) {
        let now = clock.eventTime()
        do {
            try store.write { transaction in
                guard try transaction.markInboundSeen(requestID) else { return }  // answered before
                try also?(transaction)
                let computed = try extraFrom?(transaction) ?? []
                let sequence = try transaction.nextCounter("result_seq")
                let uuid = try UUIDv4.make()
                var faultValue: JSONValue = .null
                if let fault { faultValue = .object([("code", .integer(Int64(fault.rawValue))), ("name", .string(fault.name))]) }
                let payload = JSONValue.object([
                    ("id", .string(uuid)), ("seq", .integer(sequence)), ("time", .integer(now.seconds)), ("timeTrusted", .bool(now.trusted)),
                    ("request", .string(requestID)), ("type", .string(type)), ("result", .string(result)), ("fault", faultValue),
                ] + extra + computed)
                try transaction.enqueue(OutboxEntry(topic: topics.results, payload: payload.bytes, qos: 2, priority: .commandResult,
                                                    sequence: sequence, uuid: uuid))
            }
        } catch {
            log.info("cloud: result for \(requestID) not queued: \(error)")
        }
    }

    /// At most `limit` inbound messages for the agent's thread, most important first.
    func takeInbound(limit: Int) -> [InboundEnvelope] { inbox.take(limit: limit) }

    /// Readable while inbound messages wait (CloudInboundSource polls it on the agent loop).
    var inboundArrived: EventCounter { inbox.arrived }

    /// The cloud thread's snapshot, with what the mailbox shed.
    var snapshot: CloudSnapshot {
        var snapshot = service.snapshot
        snapshot.inboundShed = inbox.shedCount
        return snapshot
    }

    /// Messages waiting for the agent's thread (the source handles a few per loop turn).
    var inboundWaiting: Bool { inbox.count > 0 }

    /// "offline", clean DISCONNECT, thread joined.
    func stop() {
        service.stop()
        log.info("cloud: stopped")
    }
}

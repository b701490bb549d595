// Payloads the car publishes: events from the audit log and state reports. Every payload
// carries the message UUID ("id") and a sequence ("seq") so the cloud can de-duplicate;
// delivery is at-least-once, the effect exactly-once.
import Protocol

public enum EventPayload {
    public static func encode(_ stored: StoredEvent) -> [UInt8] {
        let event = stored.event
        var fault: JSONValue = .null
        if let f = event.fault {
            fault = .object([("code", f.code.map { .integer($0) } ?? .null), ("name", .string(f.name))])
        }
        var members: [(String, JSONValue)] = [
            ("id", .string(stored.uuid)),
            ("seq", .integer(stored.seq)),
            ("time", .integer(event.time.seconds)),
            ("timeTrusted", .bool(event.time.trusted)),
            ("kind", .string(event.kind.rawValue)),
            ("actor", event.actor.map { .string($0) } ?? .null),
            ("action", .string(event.action)),
            ("result", .string(event.result)),
            ("fault", fault),
            ("detail", event.detailJSON.map { .raw($0) } ?? .null),
        ]
        // Audit chain (docs/cloud.md, "Audit chain and checkpoints"): last, so the members
        // above keep their order; absent for events written before the chain existed.
        if let chain = stored.chain {
            members += [("prevHash", .string(chain.prevHash.hexString)), ("hash", .string(chain.hash.hexString))]
        }
        return JSONValue.object(members).bytes
    }

    /// The router the agent installs on CarStore: every event goes to vehicles/{id}/events,
    /// access decisions with the never-dropped priority.
    public static func router(_ topics: CloudTopics) -> any EventRouter {
        CloudEventRouter(topics: topics)
    }
}

/// Every event to vehicles/{id}/events; access decisions with the never-dropped priority.
public struct CloudEventRouter: EventRouter {
    public let topics: CloudTopics

    public init(topics: CloudTopics) { self.topics = topics }

    public func route(_ stored: StoredEvent) -> OutboxEntry? {
        OutboxEntry(topic: topics.events, payload: EventPayload.encode(stored), qos: 1,
                    priority: stored.event.kind == .accessDecision ? .accessEvent : .event,
                    sequence: stored.seq, uuid: stored.uuid)
    }
}

/// What the car knows about itself, reported retained on vehicles/{id}/state.
public struct StateReport: Sendable, Equatable {
    public var vehicle: VehicleState
    /// Proximity zone of the nearest authenticated key ("none" when no key is near).
    public var keyProximityZone: String
    public var nearestKeyDistanceCentimetres: Int64?
    public var cloudConnected: Bool
    public var clockTrusted: Bool
    public var outboxDepth: Int
    public var health: String
    public var softwareVersion: String

    public init(vehicle: VehicleState, keyProximityZone: String = "none", nearestKeyDistanceCentimetres: Int64? = nil,
                cloudConnected: Bool, clockTrusted: Bool, outboxDepth: Int, health: String = "ok",
                softwareVersion: String = BuildInfo.version) {
        self.vehicle = vehicle
        self.keyProximityZone = keyProximityZone
        self.nearestKeyDistanceCentimetres = nearestKeyDistanceCentimetres
        self.cloudConnected = cloudConnected
        self.clockTrusted = clockTrusted
        self.outboxDepth = outboxDepth
        self.health = health
        self.softwareVersion = softwareVersion
    }

    /// COVESA VSS 5.0 names where they exist; our own `OpenCarKey.` branch for what VSS lacks.
    public func encode(uuid: String, sequence: Int64, timeSeconds: Int64, timeTrusted: Bool) -> [UInt8] {
        JSONValue.object([
            ("id", .string(uuid)),
            ("seq", .integer(sequence)),
            ("time", .integer(timeSeconds)),
            ("timeTrusted", .bool(timeTrusted)),
            ("signals", .object([
                ("Vehicle.Cabin.Door.Row1.DriverSide.IsLocked", .bool(vehicle.contains(.locked))),
                ("Vehicle.Cabin.Door.Row1.DriverSide.IsOpen", .bool(vehicle.contains(.driverDoorOpen))),
                ("Vehicle.Body.Trunk.Rear.IsOpen", .bool(vehicle.contains(.trunkOpen))),
                ("Vehicle.Body.Trunk.Rear.IsLocked", .bool(vehicle.contains(.trunkLocked))),
                ("OpenCarKey.Cabin.AnyDoorOpen", .bool(vehicle.contains(.anyDoorOpen))),
                ("OpenCarKey.Key.Proximity.Zone", .string(keyProximityZone)),
                ("OpenCarKey.Key.Proximity.Distance", nearestKeyDistanceCentimetres.map { .integer($0) } ?? .null),
                ("OpenCarKey.CloudLink.IsConnected", .bool(cloudConnected)),
                ("OpenCarKey.Clock.IsTrusted", .bool(clockTrusted)),
                ("OpenCarKey.Outbox.Depth", .integer(Int64(outboxDepth))),
                ("OpenCarKey.Agent.Health", .string(health)),
                ("OpenCarKey.Agent.Version", .string(softwareVersion)),
            ])),
        ]).bytes
    }
}

extension StoreTransaction {
    /// Queues a state report on vehicles/{id}/state (retained), replacing any older unsent one.
    @discardableResult
    public func enqueueStateReport(_ report: StateReport, topics: CloudTopics, time: EventTime) throws -> Int64 {
        let sequence = try nextCounter("state_seq")
        let uuid = try UUIDv4.make(random: randomSource)
        return try enqueue(OutboxEntry(topic: topics.state, payload: report.encode(uuid: uuid, sequence: sequence, timeSeconds: time.seconds,
                                                                                 timeTrusted: time.trusted),
                                       qos: 1, retain: true, priority: .stateReport, sequence: sequence, uuid: uuid, coalesceKey: topics.state))
    }
}

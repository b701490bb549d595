// The topic layout under vehicles/{id}/ (see docs/cloud.md for payloads, QoS and ACLs).

public struct CloudTopics: Sendable, Equatable {
    public let vehicleID: String

    public init(vehicleID: String) { self.vehicleID = vehicleID }

    private var base: String { "vehicles/\(vehicleID)" }

    /// Retained presence: {"state":"online|offline|lost","birth":N}. QoS 1.
    public var status: String { base + "/status" }
    /// Retained vehicle state (VSS names plus our own branch). QoS 1.
    public var state: String { base + "/state" }
    /// The audit event log, one event per message. QoS 1.
    public var events: String { base + "/events" }
    /// Results of remote commands. QoS 2.
    public var results: String { base + "/results" }
    /// Inbound: remote commands and signed key objects from the cloud.
    public var commands: String { base + "/commands" }
    /// Inbound: configuration documents.
    public var config: String { base + "/config" }
    /// Inbound: signed remote commands (lock, unlock, trunk, status, report now). QoS 1 or 2.
    public var remoteCommands: String { base + "/cmd" }
    /// Inbound, retained: the signed desired configuration (versioned, expiring).
    public var configDesired: String { base + "/config/desired" }
    /// Outbound, retained: the outcome of the last configuration document (version, result).
    public var configReported: String { base + "/config/reported" }
    /// Inbound, retained: the owner-signed, versioned revocation list.
    public var revocationList: String { base + "/revocations" }
    /// Outbound: signed audit-chain checkpoints (sequence, head hash, time). QoS 1.
    public var audit: String { base + "/audit" }

    /// What the car subscribes to.
    public var inbound: [String] { [commands, config, remoteCommands, revocationList, configDesired] }
}

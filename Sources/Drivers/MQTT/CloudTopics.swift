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

    /// What the car subscribes to.
    public var inbound: [String] { [commands, config] }
}

// Event-log rows about the car's body, besides the engine's access decisions: actuator faults,
// input changes (doors, trunk, lock switch) and service actions from the console. Like the
// audit rows: names, line numbers and results only. A store failure is logged and the car
// keeps working (refusing to lock because the log disk is full would be worse).
import Drivers
import Protocol

final class VehicleEvents {
    // Input changes and service actions are vehicle facts, not access decisions: their own
    // kinds (EventKind.vehicleState, .service), published like every other event.

    private let store: CarStore
    private let clock: AgentClock
    private let log: AgentLog
    /// Runs before each row is written: the agent commits the audit rows still waiting for
    /// the loop round's group commit, so sequence numbers keep the order things happened.
    var beforeWrite: (() -> Void)?

    init(store: CarStore, clock: AgentClock, log: AgentLog) {
        self.store = store
        self.clock = clock
        self.log = log
    }

    /// A pulse the car did not confirm, or one that could not be driven at all.
    /// `actor`: the key that asked (nil for a console service test).
    func actuatorFault(_ actuation: Actuation, line: GPIOLineReference?, result: String, detail: [(String, JSONValue)],
                       actor: KeyID?) {
        var fields: [(String, JSONValue)] = [("source", .string(actor == nil ? "console" : "phone"))]
        if let line {
            fields += [("line", .string(line.role)), ("chip", .string(line.chip)), ("offset", .integer(Int64(line.line)))]
        }
        append(NewEvent(kind: .actuatorFault, time: clock.eventTime(), actor: actor?.bytes.hexString,
                        action: .actuation(actuation), result: result,
                        fault: EventFault(code: Int64(FaultCode.actuationFailed.rawValue), name: FaultCode.actuationFailed.name),
                        detailJSON: JSONValue.object(fields + detail).serialized))
    }

    /// A debounced input change, e.g. action "doorOpen", result "active".
    func inputChanged(_ role: InputRole, active: Bool, suppressed: Int) {
        let detail = suppressed > 0 ? JSONValue.object([("suppressed", .integer(Int64(suppressed)))]).serialized : nil
        append(NewEvent(kind: .vehicleState, time: clock.eventTime(), action: .input(role),
                        result: active ? "active" : "inactive", detailJSON: detail))
    }

    /// A console service action (service mode on/off, a wrong PIN, a test actuation).
    /// `actor`: the key ID that signed a service challenge (nil for the PIN and for refusals).
    func service(_ action: EventAction, result: String, fault: String? = nil, actor: String? = nil) {
        append(NewEvent(kind: .service, time: clock.eventTime(), actor: actor, action: action, result: result,
                        fault: fault.map { EventFault(name: $0) }, detailJSON: #"{"source":"console"}"#))
    }

    /// The protocol's command name for an actuation ("trunk" for trunkRelease), so events and
    /// access decisions use the same words.
    static func name(_ actuation: Actuation) -> String {
        switch actuation {
        case .lock: return CommandCode.lock.name
        case .unlock: return CommandCode.unlock.name
        case .trunkRelease: return CommandCode.trunkRelease.name
        }
    }

    private func append(_ event: NewEvent) {
        beforeWrite?()
        do {
            try store.appendEvent(event)
        } catch {
            log.error("events: could not append \(event.kind) \(event.action): \(error)")
        }
    }
}

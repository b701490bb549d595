// An in-process stand-in for the lock actuators: records what it would have pulsed and keeps a
// plausible vehicle state. Replaced by the GPIO-backed actuator in issue #5.
import Protocol

final class SimulatedActuator: VehicleActuator {
    private(set) var state: VehicleState
    /// Everything "pulsed" so far, oldest first (diagnostics).
    private(set) var history: [String] = []

    init(initialState: VehicleState = [.locked, .trunkLocked]) {
        state = initialState
    }

    func perform(_ command: CommandCode, args: Bytes) -> ActuationResult {
        let summary: String
        switch command {
        case .unlock:
            state.remove(.locked)
            summary = "unlock pulsed"
        case .lock:
            state.insert(.locked)
            summary = "lock pulsed"
        case .trunkRelease:
            state.remove(.trunkLocked)
            state.insert(.trunkOpen)
            summary = "trunk release pulsed"
        case .status:
            summary = "status read"
        case .userVerified:
            summary = "user verification noted (no actuation)"
        case .revoke:
            // Revocations reach the agent as CarAction.revoke, never as an actuation.
            summary = "revoke is not an actuation"
        }
        history.append(summary)
        return ActuationResult(fault: nil, state: state, summary: summary)
    }
}

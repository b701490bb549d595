// What the agent asks of the car's body electronics: carry out one accepted command and say
// what state the car is in afterwards. The GPIO issue (#5) implements this with the interlocked
// pulsed actuators; until then `SimulatedActuator` stands in.
import Protocol

struct ActuationResult: Equatable {
    /// nil: carried out. Otherwise the fault for the Response, usually `.actuationFailed`.
    let fault: FaultCode?
    /// The vehicle state after the attempt (reported in the Response either way).
    let state: VehicleState
    /// One line for the log, e.g. "unlock pulsed"; never contains command arguments.
    let summary: String
}

protocol VehicleActuator: AnyObject {
    /// The state before any command ran (for faults the engine sends first).
    var state: VehicleState { get }
    /// Carries out `command`. Called on the agent's loop thread; must return within a bounded
    /// time (a pulse plus read-back), never block on a peer.
    func perform(_ command: CommandCode, args: Bytes) -> ActuationResult
}

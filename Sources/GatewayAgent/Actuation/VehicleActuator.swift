// What the agent asks of the car's body electronics: carry out one accepted command and say
// what state the car is in afterwards. A pulse takes hundreds of milliseconds, so the answer
// may come later: `start` returns nil, and the actuator hands the outcome back on the loop
// thread (GPIOActuator through its completion descriptor, then CarService.actuationFinished).
import Protocol

struct CommandOutcome: Equatable {
    /// nil: carried out. Otherwise the fault for the Response (`actuationFailed`, `busy`).
    let fault: FaultCode?
    /// The vehicle state after the attempt (reported in the Response either way).
    let state: VehicleState
    /// One line for the log, e.g. "unlock pulsed on unlock (chip sim-gpio, line 27)"; never
    /// contains command arguments.
    let summary: String
}

protocol VehicleActuator: AnyObject {
    /// The state now (for faults the engine sends first, status, the cloud).
    var state: VehicleState { get }
    /// Starts an accepted command. Returns its outcome when there is nothing to wait for
    /// (status; a refusal such as busy, in which case nothing moved); nil when a pulse started.
    func start(_ request: CommandRequest) -> CommandOutcome?
}

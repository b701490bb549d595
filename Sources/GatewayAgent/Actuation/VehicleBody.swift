// The car's body on the agent loop: the GPIO actuator, the input sampler and the path by which
// ended pulses come back. Built once at start-up from the opened hardware; its loop sources go
// into AgentLoop, and shutdown waits for a running pulse before the lines are released
// (the start-up code releases them last, whatever failed in between).
import Drivers

final class VehicleBody {
    let hardware: VehicleHardware
    let actuator: GPIOActuator
    let sampler: InputSampler
    let completions: ActuationCompletions
    let events: VehicleEvents

    init(hardware: VehicleHardware, store: CarStore, clock: AgentClock, log: AgentLog) throws {
        let gpioClock = SystemClock()
        var monitor = InputMonitor(board: hardware.board)
        let initial: [InputRole: Bool]
        do {
            initial = try InputSampler.initialStates(hardware.lines, monitor: &monitor, clock: gpioClock)
        } catch {
            throw AgentStartFailure(description: "GPIO: inputs cannot be read: \(error)")
        }
        events = VehicleEvents(store: store, clock: clock, log: log)
        self.hardware = hardware
        actuator = try GPIOActuator(hardware: hardware, initialInputs: initial, events: events, clock: gpioClock)
        sampler = InputSampler(actuator: actuator, monitor: monitor, events: events, clock: gpioClock, log: log)
        completions = ActuationCompletions(actuator: actuator)
    }

    var sources: [any LoopSource] { [completions, sampler] }

    /// Pulses the engine asked for are completed through the service; input changes tell the
    /// service's observers (the cloud link) the new state; vehicle events are written after
    /// the service's pending audit rows.
    func connect(_ service: CarService) {
        completions.onPhoneCommand = { [unowned service] request, outcome in service.actuationFinished(request, outcome) }
        sampler.onStateChanged = { [unowned service, unowned actuator] in service.stateObserver?(actuator.state) }
        events.beforeWrite = { [unowned service] in service.commitPendingRows() }
    }

    /// One line for start-up output.
    var summary: String {
        let backend = hardware.simulated == nil ? "libgpiod \(LibgpiodBackend.libraryVersion)" : "simulated chip"
        return "GPIO \(backend), board \(hardware.board.name) (\(hardware.boardSource)), vehicle state \(actuator.state)"
    }

    /// Shutdown, after the loop ended: the running pulse (if any) ends and is answered.
    func finishRunning() {
        completions.finishRunning()
    }
}

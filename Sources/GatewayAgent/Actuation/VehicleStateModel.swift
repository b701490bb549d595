// What the car's state is, from the debounced inputs and the actuations. Pure: fed by the
// input sampler and the actuator, read for every Response, the console and the cloud.
//
// - Doors and trunk come from their inputs only (the switches are the truth).
// - Locked comes from the lock-state input when the board has one. Without it, the last lock
//   or unlock pulse is taken to have worked, and the car is assumed locked at start-up (a
//   parked car usually is; the first command corrects the assumption either way).
// - The trunk counts as locked while it is closed: a released trunk latch pops it open, and
//   closing it latches it again.
import Drivers
import Protocol

struct VehicleStateModel: Equatable {
    let hasLockFeedback: Bool
    private(set) var locked: Bool
    private(set) var doorOpen: Bool
    private(set) var trunkOpen: Bool

    /// `inputs`: the first debounced sample (InputMonitor.states).
    init(inputs: [InputRole: Bool], hasLockFeedback: Bool) {
        self.hasLockFeedback = hasLockFeedback
        locked = hasLockFeedback ? inputs[.lockState] ?? true : true
        doorOpen = inputs[.doorOpen] ?? false
        trunkOpen = inputs[.trunkOpen] ?? false
    }

    var state: VehicleState {
        var state: VehicleState = []
        if locked { state.insert(.locked) }
        if doorOpen { state.insert(.anyDoorOpen) }
        if trunkOpen { state.insert(.trunkOpen) } else { state.insert(.trunkLocked) }
        return state
    }

    /// Where "locked" comes from, for the console.
    var lockSource: String { hasLockFeedback ? "lock-state input" : "last actuation (no lock-state input)" }

    mutating func inputChanged(_ role: InputRole, active: Bool) {
        switch role {
        case .doorOpen: doorOpen = active
        case .trunkOpen: trunkOpen = active
        case .lockState: if hasLockFeedback { locked = active }
        case .pairingButton, .doorHandle: break
        }
    }

    /// After a pulse: the read-back wins; without one, the command is assumed to have worked.
    /// An unreadable read-back leaves the state as it was (it is unknown, and the fault says so).
    mutating func actuationEnded(_ actuation: Actuation, feedback: LockFeedback) {
        switch feedback {
        case .confirmed(let isLocked): locked = isLocked
        case .mismatch(_, let observed): locked = observed
        case .unreadable: break
        case .notChecked:
            switch actuation {
            case .lock: locked = true
            case .unlock: locked = false
            case .trunkRelease: break
            }
        }
    }
}

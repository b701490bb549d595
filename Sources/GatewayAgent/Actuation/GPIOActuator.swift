// The VehicleActuator on the board's GPIO: lock, unlock and trunk commands pulse their lines
// through LockActuators on the actuation worker; the state comes from VehicleStateModel.
//
// Only commands the engine accepted reach `start` (a refused command never gets here, so it
// cannot move a line). One pulse at a time: a command while one runs is answered `busy` at
// once, as LockActuators' interlock would, without starting a thread. A pulse the car does not
// confirm (lock-state read-back mismatch or unreadable) or that could not be driven is a
// fault for the phone (`actuationFailed`) and an `actuator-fault` row in the event log.
import Drivers
import Protocol

final class GPIOActuator: VehicleActuator {
    /// Who asked for a pulse.
    enum Origin {
        case phone(CommandRequest)
        /// `actuate` on the serial console in service mode.
        case service
        /// The car's own decision from proximity: passive entry (a key in the Unlock zone and
        /// the door handle pulled) or walk-away lock; `key` is the key it was made for.
        case automatic(key: KeyID?, reason: String)
        /// A signed remote command from the cloud (`commandID` its UUID), or its auto-relock;
        /// `key` is the signer.
        case remote(commandID: String, key: KeyID?)
    }

    struct Finished {
        let origin: Origin
        let actuation: Actuation
        let outcome: CommandOutcome
    }

    /// A lock-state change within this time after a lock or unlock started is the expected
    /// consequence of the pulse, not news (pulse + settle + debounce fit well inside).
    static let expectedChangeWindowMillis: UInt64 = 3000

    let hardware: VehicleHardware
    private let worker: ActuationWorker
    private let events: VehicleEvents
    private let clock: any MonotonicClock
    private var model: VehicleStateModel
    private var running: (origin: Origin, actuation: Actuation)?
    /// The lock state the last lock/unlock pulse aimed at, and when it started.
    private var lastLockTarget: (locked: Bool, atMillis: UInt64)?

    init(hardware: VehicleHardware, initialInputs: [InputRole: Bool], events: VehicleEvents,
         clock: any MonotonicClock) throws(Errno) {
        self.hardware = hardware
        self.worker = try ActuationWorker(actuators: hardware.actuators)
        self.events = events
        self.clock = clock
        self.model = VehicleStateModel(inputs: initialInputs, hasLockFeedback: hardware.board.inputs[.lockState] != nil)
    }

    var state: VehicleState { model.state }
    var stateModel: VehicleStateModel { model }
    /// The actuation running now, if any.
    var inProgress: Actuation? { running?.actuation }
    /// Why actuation is disabled (a line could not be driven back inactive), if it is.
    var latchedReason: String? { hardware.actuators.latchedReason }
    /// Readable when a pulse has ended: call `takeFinished()`.
    var completionDescriptor: FileDescriptor { worker.descriptor }

    func start(_ request: CommandRequest) -> CommandOutcome? {
        switch request.command {
        case .unlock: return begin(.unlock, origin: .phone(request))
        case .lock: return begin(.lock, origin: .phone(request))
        case .trunkRelease: return begin(.trunkRelease, origin: .phone(request))
        case .status: return CommandOutcome(fault: nil, state: state, summary: "status read")
        case .userVerified: return CommandOutcome(fault: nil, state: state, summary: "user verification noted (no actuation)")
        case .revoke:
            // Revocations reach the agent as CarAction.revoke, never as an actuation.
            return CommandOutcome(fault: .internalError, state: state, summary: "revoke is not an actuation")
        case .rangingSetup, .rangingCapabilities:
            // Answered by the engine itself, never an actuation.
            return CommandOutcome(fault: .internalError, state: state, summary: "\(request.command) is not an actuation")
        }
    }

    /// A service test from the console: nil when the pulse started, else the refusal.
    func startService(_ actuation: Actuation) -> CommandOutcome? {
        begin(actuation, origin: .service)
    }

    /// Passive entry or walk-away lock: nil when the pulse started, else the refusal.
    func startAutomatic(_ actuation: Actuation, key: KeyID?, reason: String) -> CommandOutcome? {
        begin(actuation, origin: .automatic(key: key, reason: reason))
    }

    /// A verified remote command (or its auto-relock): nil when the pulse started, else the refusal.
    func startRemote(_ actuation: Actuation, commandID: String, key: KeyID?) -> CommandOutcome? {
        begin(actuation, origin: .remote(commandID: commandID, key: key))
    }

    private func begin(_ actuation: Actuation, origin: Origin) -> CommandOutcome? {
        let name = VehicleEvents.name(actuation)
        if let reason = latchedReason {
            return CommandOutcome(fault: .actuationFailed, state: state, summary: "\(name) refused: actuators disabled after an earlier failure (\(reason))")
        }
        if let other = running?.actuation {
            return CommandOutcome(fault: .busy, state: state, summary: "\(name) refused: busy, \(VehicleEvents.name(other)) in progress")
        }
        guard worker.start(actuation) else {
            return CommandOutcome(fault: .actuationFailed, state: state, summary: "\(name) refused: no thread for the pulse")
        }
        running = (origin, actuation)
        switch actuation {
        case .lock: lastLockTarget = (true, clock.nowMillis())
        case .unlock: lastLockTarget = (false, clock.nowMillis())
        case .trunkRelease: break
        }
        return nil
    }

    /// The pulse that ended (the completion descriptor was readable); nil on a stale wake-up.
    func takeFinished() -> Finished? {
        guard let (actuation, outcome) = worker.takeFinished() else { return nil }
        return conclude(actuation, outcome)
    }

    /// Shutdown: waits for a running pulse (bounded) so no line is released mid-pulse.
    func finishRunning() -> Finished? {
        guard let (actuation, outcome) = worker.finishRunning() else { return nil }
        return conclude(actuation, outcome)
    }

    /// A debounced input change from the sampler; true when it is news (not the lock switch
    /// following our own pulse), i.e. worth an event row.
    func inputChanged(_ role: InputRole, active: Bool, atMillis now: UInt64) -> Bool {
        model.inputChanged(role, active: active)
        guard role == .lockState, let target = lastLockTarget else { return true }
        return !(target.locked == active && now >= target.atMillis && now - target.atMillis <= Self.expectedChangeWindowMillis)
    }

    func close() {
        worker.close()
    }

    private func conclude(_ actuation: Actuation, _ outcome: ActuationWorker.Outcome) -> Finished? {
        guard let origin = running?.origin else { return nil }
        running = nil
        let actor: KeyID?
        switch origin {
        case .phone(let request): actor = request.keyID
        case .automatic(let key, _): actor = key
        case .remote(_, let key): actor = key
        case .service: actor = nil
        }
        let name = VehicleEvents.name(actuation)
        switch outcome {
        case .success(let pulse):
            model.actuationEnded(actuation, feedback: pulse.feedback)
            let moved = "\(name) pulsed on \(pulse.line) for \(pulse.activeMillis) ms"
            switch pulse.feedback {
            case .notChecked:
                return Finished(origin: origin, actuation: actuation, outcome: CommandOutcome(fault: nil, state: state, summary: moved))
            case .confirmed(let locked):
                return Finished(origin: origin, actuation: actuation, outcome: CommandOutcome(fault: nil, state: state, summary: "\(moved), lock state confirmed \(Self.lockWord(locked))"))
            case .mismatch(let expected, let observed):
                events.actuatorFault(actuation, line: pulse.line, result: "mismatch",
                                     detail: [("expected", .string(Self.lockWord(expected))), ("observed", .string(Self.lockWord(observed)))],
                                     actor: actor)
                return Finished(origin: origin, actuation: actuation, outcome: CommandOutcome(
                    fault: .actuationFailed, state: state,
                    summary: "\(moved), but the lock state reads \(Self.lockWord(observed)) (expected \(Self.lockWord(expected))): actuator fault"))
            case .unreadable(let error):
                events.actuatorFault(actuation, line: pulse.line, result: "unreadable", detail: [("error", .string("\(error)"))], actor: actor)
                return Finished(origin: origin, actuation: actuation, outcome: CommandOutcome(
                    fault: .actuationFailed, state: state, summary: "\(moved), but the lock state could not be read: \(error)"))
            }
        case .failure(let error):
            let line = hardware.lines.lineStates().first { $0.isOutput && $0.role == actuation.outputRole.rawValue }?.reference
            switch error {
            case .busy:
                return Finished(origin: origin, actuation: actuation, outcome: CommandOutcome(fault: .busy, state: state, summary: "\(name) refused: \(error)"))
            case .latched:
                return Finished(origin: origin, actuation: actuation, outcome: CommandOutcome(fault: .actuationFailed, state: state, summary: "\(name) refused: \(error)"))
            case .gpio, .stuckActive, .invalidPulseWidth, .invalidSettleTime:
                let result: String
                if case .stuckActive = error { result = "stuck" } else { result = "failed" }
                events.actuatorFault(actuation, line: line, result: result, detail: [("error", .string("\(error)"))], actor: actor)
                return Finished(origin: origin, actuation: actuation, outcome: CommandOutcome(fault: .actuationFailed, state: state, summary: "\(name) failed: \(error)"))
            }
        }
    }

    static func lockWord(_ locked: Bool) -> String { locked ? "locked" : "unlocked" }
}

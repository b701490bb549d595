// Brings ended pulses back to the loop thread: polls the actuator's completion descriptor and
// hands each outcome to whoever asked (the phone's command through CarService, a console
// service test back to the console).
import Drivers
import Protocol

final class ActuationCompletions: LoopSource {
    private let actuator: GPIOActuator
    var onPhoneCommand: ((CommandRequest, CommandOutcome) -> Void)?
    var onServiceTest: ((Actuation, CommandOutcome) -> Void)?
    /// Passive entry and walk-away lock (the proximity service logs and records them).
    var onAutomatic: ((Actuation, _ key: KeyID?, _ reason: String, CommandOutcome) -> Void)?
    /// Signed remote commands from the cloud and their auto-relock (RemoteCommandService).
    var onRemote: ((Actuation, _ commandID: String, CommandOutcome) -> Void)?

    init(actuator: GPIOActuator) {
        self.actuator = actuator
    }

    func pollSet() -> [(FileDescriptor, PollEvents)] { [(actuator.completionDescriptor, .readable)] }

    func nextDeadline() -> UInt64? { nil }

    func process(_ ready: [PollEvents], nowMillis: UInt64) {
        guard let events = ready.first, !events.isEmpty, let finished = actuator.takeFinished() else { return }
        deliver(finished)
    }

    /// Shutdown: the pulse still running ends and is answered before the lines are released.
    func finishRunning() {
        if let finished = actuator.finishRunning() { deliver(finished) }
    }

    private func deliver(_ finished: GPIOActuator.Finished) {
        switch finished.origin {
        case .phone(let request): onPhoneCommand?(request, finished.outcome)
        case .service: onServiceTest?(finished.actuation, finished.outcome)
        case .automatic(let key, let reason): onAutomatic?(finished.actuation, key, reason, finished.outcome)
        case .remote(let commandID, _): onRemote?(finished.actuation, commandID, finished.outcome)
        }
    }
}

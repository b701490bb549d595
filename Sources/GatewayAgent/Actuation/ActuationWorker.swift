// Runs one pulse at a time off the agent's thread. `LockActuators.pulse` blocks for the pulse
// plus the feedback settle time (about 450 ms on the shipped boards, at most 3 s); on the loop
// thread that would stall every phone link, the console and signal handling for that long.
//
// Each pulse gets its own thread, joined when its result is taken: there is at most one (the
// caller checks `isBusy`, and LockActuators' interlock refuses a second anyway), so a pool or a
// job queue would only add states. The thread stores the result and wakes the loop through a
// pipe; everything else (state, events, the engine) stays on the loop thread.
import Drivers
import Synchronization

final class ActuationWorker {
    typealias Outcome = Result<Drivers.ActuationResult, ActuationError>

    /// What the pulse thread needs; shared with it, hence Sendable.
    private final class PulseJob: Sendable {
        let actuators: LockActuators
        let actuation: Actuation
        let wake: WakePipe
        let outcome = Mutex<Outcome?>(nil)

        init(actuators: LockActuators, actuation: Actuation, wake: WakePipe) {
            self.actuators = actuators
            self.actuation = actuation
            self.wake = wake
        }

        func run() {
            let result: Outcome
            do throws(ActuationError) {
                result = .success(try actuators.pulse(actuation))
            } catch {
                result = .failure(error)
            }
            outcome.withLock { $0 = result }
            wake.wake()
        }
    }

    private let actuators: LockActuators
    private let wake: WakePipe
    private var running: (thread: SystemThread, task: PulseJob)?

    init(actuators: LockActuators) throws(Errno) {
        self.actuators = actuators
        wake = try WakePipe()
    }

    /// Readable when a pulse has ended: call `takeFinished()`.
    var descriptor: FileDescriptor { wake.readEnd }

    var isBusy: Bool { running != nil }

    /// Starts `actuation` on a new thread; false when one is still running or no thread could
    /// be created (the caller answers busy or a failure, nothing moved).
    func start(_ actuation: Actuation) -> Bool {
        guard running == nil else { return false }
        let task = PulseJob(actuators: actuators, actuation: actuation, wake: wake)
        guard let thread = try? SystemThread.start(name: "carkey-pulse", { task.run() }) else { return false }
        running = (thread, task)
        return true
    }

    /// The ended pulse, its thread joined; nil while it still runs (a stale wake-up).
    func takeFinished() -> (Actuation, Outcome)? {
        wake.drain()
        guard let (thread, task) = running, let outcome = task.outcome.withLock({ $0 }) else { return nil }
        // The thread's last act was the wake-up: the join returns at once.
        thread.join()
        running = nil
        return (task.actuation, outcome)
    }

    /// Shutdown: waits for a running pulse to end (bounded by pulse + settle, at most 3 s by
    /// the board-file ranges) so the lines are never released mid-pulse.
    func finishRunning() -> (Actuation, Outcome)? {
        guard let (thread, task) = running else { return nil }
        thread.join()
        running = nil
        wake.drain()
        return task.outcome.withLock { $0 }.map { (task.actuation, $0) }
    }

    func close() { wake.close() }
}

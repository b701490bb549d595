// Samples the board's inputs every 10 ms on the agent loop (LoopSource, by timeout: libgpiod
// v1 edge events would need a descriptor per line for four slow switches), debounces them
// through InputMonitor, updates the vehicle state, logs and records changes, and reports the
// pairing button's long press.
//
// A loose wire can make an input flap faster than anyone reads the log, and every row is a
// synced write that is also published to the cloud, so each input records at most
// `maxRowsPerWindow` rows per minute; the rest are counted into the next row.
import Drivers

final class InputSampler: LoopSource {
    static let intervalMillis: UInt64 = 10
    static let maxRowsPerWindow = 20
    static let windowMillis: UInt64 = 60_000
    /// A failing read is logged at most this often.
    static let errorLogIntervalMillis: UInt64 = 60_000

    private let actuator: GPIOActuator
    private let events: VehicleEvents
    private let clock: any MonotonicClock
    private let log: AgentLog
    private var monitor: InputMonitor
    private var nextSample: UInt64
    private var lastErrorLogged: UInt64?
    private var rows: [InputRole: (windowStart: UInt64, count: Int, suppressed: Int)] = [:]

    /// Called on the loop thread when the pairing button has been held for the hold time.
    var onPairingRequested: (() -> Void)?
    /// Called on the loop thread after a door, trunk or lock input changed the vehicle state.
    var onStateChanged: (() -> Void)?

    init(actuator: GPIOActuator, monitor: InputMonitor, events: VehicleEvents, clock: any MonotonicClock, log: AgentLog) {
        self.actuator = actuator
        self.monitor = monitor
        self.events = events
        self.clock = clock
        self.log = log
        nextSample = clock.nowMillis()
    }

    /// Takes the first sample, which sets the states without events (InputMonitor), before
    /// the actuator's state model is built from them.
    static func initialStates(_ lines: BoardLines, monitor: inout InputMonitor, clock: any MonotonicClock) throws(GPIOError) -> [InputRole: Bool] {
        _ = try monitor.sample(lines, clock: clock)
        return monitor.states
    }

    /// The debounced levels, for the console.
    var states: [InputRole: Bool] { monitor.states }

    func pollSet() -> [(FileDescriptor, PollEvents)] { [] }

    func nextDeadline() -> UInt64? { nextSample }

    func process(_ ready: [PollEvents], nowMillis now: UInt64) {
        guard now >= nextSample else { return }
        nextSample = now + Self.intervalMillis
        let changes: [InputEvent]
        do throws(GPIOError) {
            changes = try monitor.sample(actuator.hardware.lines, clock: clock)
        } catch {
            if lastErrorLogged.map({ now - $0 >= Self.errorLogIntervalMillis }) ?? true {
                lastErrorLogged = now
                log.error("inputs: \(error) (logged once a minute while it lasts)")
            }
            return
        }
        for change in changes { handle(change, now: now) }
    }

    private func handle(_ event: InputEvent, now: UInt64) {
        switch event {
        case .pairingRequested:
            log.info("inputs: pairing button held for \(monitor.pairingHoldMillis / 1000) s: opening the pairing window")
            onPairingRequested?()
        case .changed(let role, let active, _):
            let news = actuator.inputChanged(role, active: active, atMillis: now)
            if role == .pairingButton {
                log.debug("inputs: pairing button \(active ? "pressed" : "released")")
                return
            }
            if news {
                log.info("inputs: \(role.rawValue) \(active ? "active" : "inactive"); vehicle state \(actuator.state)")
                record(role, active: active, now: now)
            } else {
                log.debug("inputs: \(role.rawValue) \(active ? "active" : "inactive") after our pulse")
            }
            onStateChanged?()
        }
    }

    private func record(_ role: InputRole, active: Bool, now: UInt64) {
        var entry = rows[role] ?? (now, 0, 0)
        if now - entry.windowStart >= Self.windowMillis { entry = (now, 0, entry.suppressed) }
        if entry.count < Self.maxRowsPerWindow {
            events.inputChanged(role, active: active, suppressed: entry.suppressed)
            entry.count += 1
            entry.suppressed = 0
        } else {
            entry.suppressed += 1
        }
        rows[role] = entry
    }
}

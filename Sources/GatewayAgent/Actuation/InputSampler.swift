// Reads the board's inputs on the agent loop (LoopSource) when they change: the loop sleeps on
// each input's edge descriptor (libgpiod line events, or the simulated chip's eventfd), samples
// after an edge, and again only at the deadlines debouncing needs (the 30 ms window after an
// edge, the 5 s pairing-button hold while the button is down). An idle car therefore costs no
// wake-ups here. A chip that cannot report edges on some line falls back to sampling every
// 10 ms. Changes are debounced through InputMonitor, update the vehicle state, are logged and
// recorded, and the pairing button's long press is reported.
//
// A loose wire can make an input flap faster than anyone reads the log, and every row is a
// synced write that is also published to the cloud, so each input records at most
// `maxRowsPerWindow` rows per minute; the rest are counted into the next row.
import Drivers

final class InputSampler: LoopSource {
    /// Sampling period for inputs without an edge descriptor (a chip without edge interrupts).
    static let intervalMillis: UInt64 = 10
    /// After a failing read or drain, the next attempt (edges are not polled until then, so a
    /// descriptor that stays readable cannot spin the loop).
    static let retryMillis: UInt64 = 1000
    static let maxRowsPerWindow = 20
    static let windowMillis: UInt64 = 60_000
    /// A failing read is logged at most this often.
    static let errorLogIntervalMillis: UInt64 = 60_000

    private let actuator: GPIOActuator
    private let events: VehicleEvents
    private let clock: any MonotonicClock
    private let log: AgentLog
    private var monitor: InputMonitor
    /// Inputs with an edge descriptor, in poll order.
    private let edgeLines: [(role: InputRole, descriptor: FileDescriptor)]
    /// True when some input has no edge descriptor and must be sampled periodically.
    private let sampling: Bool
    /// The next periodic sample (sampling only).
    private var nextSample: UInt64
    /// Set after a failure: no edges are polled and nothing is read before this time.
    private var retryAt: UInt64?
    private var lastErrorLogged: UInt64?
    private var rows: [InputRole: (windowStart: UInt64, count: Int, suppressed: Int)] = [:]

    /// Called on the loop thread when the pairing button has been held for the hold time.
    var onPairingRequested: (() -> Void)?
    /// The door handle was pulled (passive entry; the proximity policy decides).
    var onDoorHandle: (() -> Void)?
    /// Called on the loop thread after a door, trunk or lock input changed the vehicle state.
    var onStateChanged: (() -> Void)?

    init(actuator: GPIOActuator, monitor: InputMonitor, events: VehicleEvents, clock: any MonotonicClock, log: AgentLog) {
        self.actuator = actuator
        self.monitor = monitor
        self.events = events
        self.clock = clock
        self.log = log
        edgeLines = actuator.hardware.lines.inputEdgeDescriptors
        sampling = !actuator.hardware.lines.allInputsReportEdges
        nextSample = clock.nowMillis()
        if sampling { log.info("inputs: some lines cannot report edges; sampling every \(Self.intervalMillis) ms") }
    }

    /// Takes the first sample, which sets the states without events (InputMonitor), before
    /// the actuator's state model is built from them.
    static func initialStates(_ lines: BoardLines, monitor: inout InputMonitor, clock: any MonotonicClock) throws(GPIOError) -> [InputRole: Bool] {
        _ = try monitor.sample(lines, clock: clock)
        return monitor.states
    }

    /// The debounced levels, for the console.
    var states: [InputRole: Bool] { monitor.states }

    func pollSet() -> [(FileDescriptor, PollEvents)] {
        retryAt == nil ? edgeLines.map { ($0.descriptor, .readable) } : []
    }

    func nextDeadline() -> UInt64? {
        if let retryAt { return retryAt }
        let settle = monitor.nextSampleMillis
        return sampling ? min(nextSample, settle ?? .max) : settle
    }

    func process(_ ready: [PollEvents], nowMillis now: UInt64) {
        // Which inputs reported an edge (empty after a timeout or while retrying).
        let signalled = zip(edgeLines, ready).filter { !$0.1.isEmpty }.map(\.0.role)
        let due = nextDeadline().map { now >= $0 } ?? false
        guard due || !signalled.isEmpty else { return }
        retryAt = nil
        if sampling && now >= nextSample { nextSample = now + Self.intervalMillis }
        let changes: [InputEvent]
        do throws(GPIOError) {
            // Edges first, then the levels: an edge after the drain leaves the descriptor
            // readable for the next round, so no change is missed between the two.
            let edged = try actuator.hardware.lines.drainEdges(signalled)
            changes = try monitor.sample(actuator.hardware.lines, clock: clock, edged: edged)
        } catch {
            retryAt = now + Self.retryMillis
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
            if role == .doorHandle {
                // Not a vehicle state: a request for passive entry, decided by the proximity policy.
                log.debug("inputs: door handle \(active ? "pulled" : "released")")
                if active { onDoorHandle?() }
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

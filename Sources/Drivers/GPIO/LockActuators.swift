// Pulsed lock, unlock and trunk-release actuators with an interlock and lock-state read-back.
//
// Interlock: one actuation at a time, and a request while one is in progress is REFUSED with
// `.busy`, not queued. Queueing would replay stale intent (an unlock tapped, then a lock tapped,
// would run both seconds later); refusing maps to the protocol's `busy` fault and the phone
// retries. Holding the interlock through the settle time also keeps an unlock from racing the
// read-back of a lock. Because only one line is ever active, lock and unlock (which drive the
// same motor in opposite directions through an H-bridge or relay pair) can never be both active.

import Synchronization

public final class LockActuators: Sendable {
    private struct State {
        var inProgress: Actuation?
        var latchedReason: String?
    }

    private let lines: BoardLines
    private let clock: any MonotonicClock
    private let pulseWidthMillis: UInt64
    private let settleMillis: UInt64
    private let state = Mutex(State())

    /// Re-checks the timing even though board files are validated: the description is a public
    /// struct and could be built in code with any value.
    public init(lines: BoardLines, clock: any MonotonicClock) throws(ActuationError) {
        let board = lines.board
        guard BoardDescription.pulseWidthRange.contains(board.pulseWidthMillis) else {
            throw .invalidPulseWidth(board.pulseWidthMillis)
        }
        guard BoardDescription.feedbackSettleRange.contains(board.feedbackSettleMillis) else {
            throw .invalidSettleTime(board.feedbackSettleMillis)
        }
        self.lines = lines
        self.clock = clock
        self.pulseWidthMillis = board.pulseWidthMillis
        self.settleMillis = board.feedbackSettleMillis
    }

    /// The actuation currently running, if any.
    public var inProgress: Actuation? { state.withLock { $0.inProgress } }

    /// Why actuation is disabled, if an output failed to return to inactive.
    public var latchedReason: String? { state.withLock { $0.latchedReason } }

    /// Drives the actuation's line active for the pulse width, then inactive, then (lock and
    /// unlock only) reads the lock-state feedback after the settle time. Blocks the caller for
    /// the pulse plus settle time (at most 3 s by the validated ranges).
    public func pulse(_ actuation: Actuation) throws(ActuationError) -> ActuationResult {
        try state.withLock { (state: inout State) throws(ActuationError) in
            if let reason = state.latchedReason { throw .latched(reason: reason) }
            if let other = state.inProgress { throw .busy(inProgress: other) }
            state.inProgress = actuation
        }
        // Only this call can reach here until inProgress is cleared, so lines are used exclusively.
        var clearInterlock = true
        defer { if clearInterlock { state.withLock { $0.inProgress = nil } } }

        // BoardLines requires lock, unlock and trunkRelease, so a missing output is impossible
        // for a parsed board; a hand-built one gets a typed error, not a crash.
        guard let line = lines.outputs[actuation.outputRole] else {
            throw .latched(reason: "board has no \(actuation.outputRole.rawValue) output")
        }

        let activatedAt = clock.nowMillis()
        do throws(GPIOError) {
            try line.setActive(true)
        } catch {
            // A released line is no longer driven by us (shutdown): nothing can be stuck.
            if case .released = error { throw .gpio(error) }
            // The set may have half-happened; make sure the line is inactive before reporting.
            if (try? line.setActive(false)) == nil {
                latch("\(line.reference): could not drive inactive after a failed pulse")
                clearInterlock = false
                throw .stuckActive(error)
            }
            throw .gpio(error)
        }
        clock.sleep(millis: pulseWidthMillis)
        do throws(GPIOError) {
            try line.setActive(false)
        } catch {
            // One retry: a transient ioctl failure must not leave a motor energised.
            if (try? line.setActive(false)) == nil {
                latch("\(line.reference): could not drive inactive: \(error)")
                clearInterlock = false
                throw .stuckActive(error)
            }
        }
        let deactivatedAt = clock.nowMillis()

        return ActuationResult(actuation: actuation, line: line.reference, activatedAtMillis: activatedAt,
                               deactivatedAtMillis: deactivatedAt, feedback: readFeedback(after: actuation))
    }

    private func readFeedback(after actuation: Actuation) -> LockFeedback {
        let expectedLocked: Bool
        switch actuation {
        case .lock: expectedLocked = true
        case .unlock: expectedLocked = false
        case .trunkRelease: return .notChecked
        }
        guard let input = lines.inputs[.lockState] else { return .notChecked }
        clock.sleep(millis: settleMillis)
        do throws(GPIOError) {
            let locked = try input.isActive()
            return locked == expectedLocked ? .confirmed(locked: locked) : .mismatch(expectedLocked: expectedLocked, observedLocked: locked)
        } catch {
            return .unreadable(error)
        }
    }

    /// Disables all actuation and leaves the interlock held: with a line possibly stuck active,
    /// driving the opposite line could short the motor supply through the H-bridge.
    private func latch(_ reason: String) {
        state.withLock { $0.latchedReason = reason }
    }
}

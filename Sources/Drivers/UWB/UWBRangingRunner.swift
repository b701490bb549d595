// Drives one `RangingRole` over a DW3000 round by round: startRound -> execute -> on each
// interrupt, serviceInterrupt -> role.handle -> execute ... until `.finished`. It never blocks:
// the agent's poll loop calls `interruptReadable()` when the IRQ line's descriptor is readable
// (or `poll()` at `pollIntervalMillis` when the board has no IRQ line), and the simulator calls
// `serviceInterrupt()` from its scheduler.
#if canImport(Glibc)
import Glibc
#endif
import Protocol

public final class UWBRangingRunner {
    public let driver: DW3000Driver
    public private(set) var role: any RangingRole
    /// The IRQ line from the board file (edge on the DW3000's active-high IRQ); nil: polling.
    public let interruptLine: (any GPIOInputLine)?
    /// How often to poll SYS_STATUS when there is no IRQ line.
    public let pollIntervalMillis: Int
    public private(set) var isRunning = false
    public private(set) var lastOutcome: RangingOutcome?
    public private(set) var roundsFinished = 0
    /// Called with every round's outcome (the agent feeds the proximity filter from here).
    public var onOutcome: ((RangingOutcome) -> Void)?

    public init(driver: DW3000Driver, role: any RangingRole, interruptLine: (any GPIOInputLine)? = nil,
                pollIntervalMillis: Int = 1) {
        self.driver = driver
        self.role = role
        self.interruptLine = interruptLine
        self.pollIntervalMillis = max(1, pollIntervalMillis)
    }

    /// The descriptor to poll for readability; nil means call `poll()` every `pollIntervalMillis`.
    public var interruptDescriptor: FileDescriptor? { interruptLine?.edgeDescriptor }

    /// Begins a round. A round still running is abandoned (the radio is stopped first).
    public func startRound() throws(DW3000Error) {
        if isRunning { try driver.stop() }
        isRunning = true
        lastOutcome = nil
        try deliver(perform(role.startRound()))
    }

    /// The IRQ descriptor became readable. Edges are only a wake-up: SYS_STATUS is the truth,
    /// so a failed edge drain loses nothing. The line reports both edges; the falling one costs
    /// a status read that finds nothing, which is cheaper than trusting the line's level (a
    /// wrong active-low setting in a board file would then stall ranging silently).
    @discardableResult
    public func interruptReadable() throws(DW3000Error) -> RangingOutcome? {
        _ = try? interruptLine?.drainEdges()
        return try serviceInterrupt()
    }

    /// The polling fallback: identical to an interrupt, SYS_STATUS says whether anything happened.
    @discardableResult
    public func poll() throws(DW3000Error) -> RangingOutcome? { try serviceInterrupt() }

    /// Services the chip and feeds the role; returns the outcome if this finished the round.
    @discardableResult
    public func serviceInterrupt() throws(DW3000Error) -> RangingOutcome? {
        let events = try driver.serviceInterrupt()
        guard isRunning else { return nil }
        try deliver(events)
        return isRunning ? nil : lastOutcome
    }

    /// Runs one round to its end on this thread: for tools and bench runs on a real board.
    /// Waits on the IRQ descriptor (or sleeps the poll interval) at most `timeoutMillis` in all.
    public func runRound(timeoutMillis: Int, clock: any MonotonicClock = SystemClock()) throws(DW3000Error) -> RangingOutcome {
        try startRound()
        let deadline = clock.nowMillis() + UInt64(max(0, timeoutMillis))
        while isRunning {
            let now = clock.nowMillis()
            guard now < deadline else {
                try driver.stop()
                isRunning = false
                finish(.failed(.timeout))
                break
            }
            if let fd = interruptDescriptor {
                let wait = Int32(min(UInt64(Int32.max), deadline - now))
                _ = try? Poll.wait([(fd, .readable)], timeoutMillis: wait)
                try interruptReadable()
            } else {
                clock.sleep(millis: UInt64(pollIntervalMillis))
                try poll()
            }
        }
        return lastOutcome ?? .failed(.timeout)
    }

    private func deliver(_ events: [RangingEvent]) throws(DW3000Error) {
        var queue = events[...]
        while isRunning, let event = queue.popFirst() {
            queue += try perform(role.handle(event))
        }
    }

    /// Executes actions up to a `.finished`; returns the events they produced at once (a late
    /// TX), which the caller feeds back to the role like any other.
    private func perform(_ actions: [RangingAction]) throws(DW3000Error) -> [RangingEvent] {
        var immediate: [RangingEvent] = []
        for action in actions {
            if case .finished(let outcome) = action {
                isRunning = false
                finish(outcome)
                return []
            }
            immediate += try driver.execute([action])
        }
        return immediate
    }

    private func finish(_ outcome: RangingOutcome) {
        lastOutcome = outcome
        roundsFinished += 1
        onOutcome?(outcome)
    }
}

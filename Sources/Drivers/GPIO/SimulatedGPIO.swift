// A simulated GPIO chip for tests and --simulate: outputs record their level changes with the
// clock's time (the most recent ones: a simulated car runs for weeks in soak tests and demos, and
// an unbounded record grew its memory with every pulse; counts of activations stay exact), inputs are set from outside, and optional feedback wiring lets a lock or unlock
// pulse move the lock-state input the way a real actuator's switch would. Every requested
// input has an eventfd that becomes readable when its level changes, the descriptor shape of a
// libgpiod line-event request, so the agent sleeps on the simulated chip exactly as on a real one.
import Synchronization

public final class SimulatedGPIO: GPIOBackend {
    /// One recorded output level: the initial one at request time, then every set.
    public struct LevelChange: Sendable, Equatable, CustomStringConvertible {
        public let role: String
        public let chip: String
        public let line: UInt32
        public let active: Bool
        /// The electrical level after active-low is applied (what a relay module would see).
        public let physicalHigh: Bool
        public let atMillis: UInt64
        /// True for the level set by the request itself.
        public let initial: Bool

        public var description: String {
            "\(atMillis) ms \(role) \(active ? "active" : "inactive") (\(physicalHigh ? "high" : "low"))\(initial ? " [request]" : "")"
        }
    }

    private struct LineKey: Hashable {
        var chip: String
        var line: UInt32
        init(_ config: GPIOLineConfig) { chip = config.chip; line = config.line }
    }

    private struct Requested {
        var config: GPIOLineConfig
        var role: String
        var isOutput: Bool
        /// Inputs only: raised on every level change (the simulated edge interrupt).
        var edges: EventCounter?
    }

    private struct Feedback {
        var lock: LineKey
        var unlock: LineKey
        var lockState: GPIOLineConfig
    }

    private struct State {
        var requested: [LineKey: Requested] = [:]
        /// Electrical level per line: what outputs drive, or what the outside world applies to inputs.
        var physical: [LineKey: Bool] = [:]
        /// The most recent changes, oldest first: between `historyLimit` and twice that many
        /// once full (the older half is dropped in one step, so appending stays O(1) amortised).
        var changes: [LevelChange] = []
        /// Per role, how many times its output was set active (not counting the request).
        var activations: [String: Int] = [:]
        var feedback: Feedback?
        var feedbackBroken = false
    }

    private let clock: any MonotonicClock
    private let lineCount: UInt32
    private let chips: Set<String>?
    private let historyLimit: Int
    private let state = Mutex(State())

    /// - Parameters:
    ///   - lineCount: lines per chip; offsets at or above it are out of range (RP1 and BCM2711 have 54).
    ///   - chips: the chip names/labels that exist; nil means any chip name opens.
    ///   - historyLimit: level changes kept at least (at most twice as many are held).
    public init(clock: any MonotonicClock, lineCount: UInt32 = 54, chips: Set<String>? = nil, historyLimit: Int = 1024) {
        precondition(historyLimit > 0, "historyLimit must be positive")
        self.clock = clock
        self.lineCount = lineCount
        self.chips = chips
        self.historyLimit = historyLimit
    }

    private func record(_ change: LevelChange, in state: inout State) {
        if state.changes.count >= 2 * historyLimit { state.changes.removeFirst(state.changes.count - historyLimit) }
        state.changes.append(change)
        if change.active && !change.initial { state.activations[change.role, default: 0] += 1 }
    }

    // MARK: - GPIOBackend

    public func requestOutput(_ config: GPIOLineConfig, role: String) throws(GPIOError) -> any GPIOOutputLine {
        try request(config, role: role, output: true)
    }

    public func requestInput(_ config: GPIOLineConfig, role: String) throws(GPIOError) -> any GPIOInputLine {
        try request(config, role: role, output: false)
    }

    private func request(_ config: GPIOLineConfig, role: String, output: Bool) throws(GPIOError) -> SimulatedLine {
        let reference = GPIOLineReference(role: role, chip: config.chip, line: config.line)
        if let chips, !chips.contains(config.chip) {
            throw .chipNotFound(chip: config.chipAddress, role: role)
        }
        guard config.line < lineCount else { throw .lineOutOfRange(reference, lineCount: lineCount) }
        let now = clock.nowMillis()
        let edges: EventCounter?
        do throws(Errno) {
            edges = output ? nil : try EventCounter()
        } catch {
            throw .ioFailed(reference, operation: "request edge events", errno: error)
        }
        try state.withLock { (state: inout State) throws(GPIOError) in
            let key = LineKey(config)
            if let holder = state.requested[key] { throw .lineBusy(reference, consumer: gpioConsumer(role: holder.role)) }
            state.requested[key] = Requested(config: config, role: role, isOutput: output, edges: edges)
            if output {
                // Requested at the inactive level, like the real backend.
                let physical = config.activeLow
                state.physical[key] = physical
                record(LevelChange(role: role, chip: config.chip, line: config.line, active: false,
                                   physicalHigh: physical, atMillis: now, initial: true), in: &state)
            }
        }
        return SimulatedLine(chip: self, reference: reference, config: config, edges: edges)
    }

    // MARK: - Line operations, called by SimulatedLine

    fileprivate func set(_ config: GPIOLineConfig, reference: GPIOLineReference, active: Bool) throws(GPIOError) {
        let now = clock.nowMillis()
        try state.withLock { (state: inout State) throws(GPIOError) in
            let key = LineKey(config)
            guard state.requested[key]?.isOutput == true else { throw .released(reference) }
            let physical = active != config.activeLow
            state.physical[key] = physical
            record(LevelChange(role: reference.role, chip: config.chip, line: config.line, active: active,
                               physicalHigh: physical, atMillis: now, initial: false), in: &state)
            // The actuator's switch follows the motor: a lock pulse shows locked, unlock unlocked.
            if active, let feedback = state.feedback, !state.feedbackBroken {
                if key == feedback.lock || key == feedback.unlock {
                    let locked = key == feedback.lock
                    Self.drive(&state, LineKey(feedback.lockState), physical: locked != feedback.lockState.activeLow)
                }
            }
        }
    }

    fileprivate func get(_ config: GPIOLineConfig, reference: GPIOLineReference) throws(GPIOError) -> Bool {
        try state.withLock { (state: inout State) throws(GPIOError) -> Bool in
            let key = LineKey(config)
            guard state.requested[key] != nil else { throw .released(reference) }
            return Self.physicalLevel(state, key: key, config: config) != config.activeLow
        }
    }

    fileprivate func release(_ config: GPIOLineConfig) {
        state.withLock { state in _ = state.requested.removeValue(forKey: LineKey(config)) }
    }

    /// Applies an electrical level from the outside world; a requested input that changes
    /// level reports an edge, as the kernel would.
    private static func drive(_ state: inout State, _ key: LineKey, physical: Bool) {
        let before = state.requested[key].map { physicalLevel(state, key: key, config: $0.config) }
        state.physical[key] = physical
        if let line = state.requested[key], !line.isOutput, before != physical { line.edges?.signal() }
    }

    /// An undriven input reads its pull resistor; with no pull it reads low here (real lines float).
    private static func physicalLevel(_ state: State, key: LineKey, config: GPIOLineConfig) -> Bool {
        state.physical[key] ?? (config.bias == .pullUp)
    }

    // MARK: - Test and --simulate controls

    /// Applies a logical level to an input from the outside (a door switch closing, a button press).
    public func setInput(_ config: GPIOLineConfig, active: Bool) {
        state.withLock { Self.drive(&$0, LineKey(config), physical: active != config.activeLow) }
    }

    /// Sets an input by the role it was requested for; false if no such input is requested.
    @discardableResult
    public func setInput(role: String, active: Bool) -> Bool {
        state.withLock { state in
            guard let entry = state.requested.first(where: { $0.value.role == role && !$0.value.isOutput }) else { return false }
            Self.drive(&state, entry.key, physical: active != entry.value.config.activeLow)
            return true
        }
    }

    /// Connects the lock and unlock outputs to the lock-state input, as a real actuator would.
    public func wireFeedback(lock: GPIOLineConfig, unlock: GPIOLineConfig, lockState: GPIOLineConfig) {
        state.withLock { $0.feedback = Feedback(lock: LineKey(lock), unlock: LineKey(unlock), lockState: lockState) }
    }

    /// Wires feedback for a board that has lock, unlock and lock-state lines; false otherwise.
    @discardableResult
    public func wireFeedback(board: BoardDescription) -> Bool {
        guard let lock = board.outputs[.lock], let unlock = board.outputs[.unlock], let lockState = board.inputs[.lockState] else {
            return false
        }
        wireFeedback(lock: lock, unlock: unlock, lockState: lockState)
        return true
    }

    /// Fault injection: a broken feedback wire (or a jammed actuator) stops the input following.
    public func setFeedbackBroken(_ broken: Bool) {
        state.withLock { $0.feedbackBroken = broken }
    }

    /// The most recent output levels, in order: every one while fewer than `historyLimit`
    /// have been recorded, at least the last `historyLimit` after that.
    public var changes: [LevelChange] { state.withLock { $0.changes } }

    /// How many times `role`'s output was set active since start (exact, however long the run).
    public func activations(role: String) -> Int { state.withLock { $0.activations[role] ?? 0 } }

    /// The recorded levels of one role's output.
    public func changes(role: String) -> [LevelChange] { changes.filter { $0.role == role } }

    /// The current electrical level of a line, as a probe on the pin would see it.
    public func physicalLevel(_ config: GPIOLineConfig) -> Bool {
        state.withLock { Self.physicalLevel($0, key: LineKey(config), config: config) }
    }

    /// Whether a line is currently requested (released lines are given back).
    public func isRequested(_ config: GPIOLineConfig) -> Bool {
        state.withLock { $0.requested[LineKey(config)] != nil }
    }
}

final class SimulatedLine: GPIOOutputLine, GPIOInputLine {
    let chip: SimulatedGPIO
    let reference: GPIOLineReference
    let config: GPIOLineConfig
    private let edges: EventCounter?

    init(chip: SimulatedGPIO, reference: GPIOLineReference, config: GPIOLineConfig, edges: EventCounter?) {
        self.chip = chip
        self.reference = reference
        self.config = config
        self.edges = edges
    }

    var edgeDescriptor: FileDescriptor? { edges?.descriptor }
    func drainEdges() throws(GPIOError) -> Int {
        guard chip.isRequested(config) else { throw .released(reference) }
        return Int(clamping: edges?.drain() ?? 0)
    }

    func setActive(_ active: Bool) throws(GPIOError) { try chip.set(config, reference: reference, active: active) }
    func isActive() throws(GPIOError) -> Bool { try chip.get(config, reference: reference) }
    func release() { chip.release(config) }
}

// Requests every line of a board once, at start-up, so a wrong board file fails immediately with
// the role, chip and line named, and no role can be requested twice (libgpiod would say busy).

public final class BoardLines: Sendable {
    public let board: BoardDescription
    // Actuator outputs stay internal: only LockActuators may move them, under its interlock.
    let outputs: [OutputRole: any GPIOOutputLine]
    let inputs: [InputRole: any GPIOInputLine]

    /// One line's current logical level, for the console's `gpio` command.
    public struct LineState: Sendable, Equatable {
        public let role: String
        public let isOutput: Bool
        public let reference: GPIOLineReference
        /// nil when the line could not be read.
        public let active: Bool?
    }

    /// Requests outputs first (so actuators are pinned at their safe level as early as possible),
    /// then inputs. On any failure everything already requested is released again.
    public init(board: BoardDescription, backend: any GPIOBackend) throws(GPIOError) {
        var outputs: [OutputRole: any GPIOOutputLine] = [:]
        var inputs: [InputRole: any GPIOInputLine] = [:]
        do throws(GPIOError) {
            for (role, config) in board.outputs.sorted(by: { $0.key < $1.key }) {
                outputs[role] = try backend.requestOutput(config, role: role.rawValue)
            }
            for (role, config) in board.inputs.sorted(by: { $0.key < $1.key }) {
                inputs[role] = try backend.requestInput(config, role: role.rawValue)
            }
        } catch {
            outputs.values.forEach { $0.release() }
            inputs.values.forEach { $0.release() }
            throw error
        }
        self.board = board
        self.outputs = outputs
        self.inputs = inputs
    }

    /// Logical levels of every input (raw, not debounced: feed them to an InputMonitor).
    public func readInputs() throws(GPIOError) -> [InputRole: Bool] {
        var values: [InputRole: Bool] = [:]
        for (role, line) in inputs { values[role] = try line.isActive() }
        return values
    }

    /// Each input's edge descriptor (readable after a level change), in role order; inputs
    /// whose chip cannot report edges are left out (see `allInputsReportEdges`).
    public var inputEdgeDescriptors: [(role: InputRole, descriptor: FileDescriptor)] {
        inputs.sorted { $0.key < $1.key }.compactMap { role, line in line.edgeDescriptor.map { (role, $0) } }
    }

    /// False when some input has no edge descriptor: the agent must then sample periodically.
    public var allInputsReportEdges: Bool { inputs.values.allSatisfy { $0.edgeDescriptor != nil } }

    /// Consumes the pending edges of `roles`; returns those that had at least one.
    public func drainEdges(_ roles: [InputRole]) throws(GPIOError) -> Set<InputRole> {
        var edged = Set<InputRole>()
        for role in roles {
            if let line = inputs[role], try line.drainEdges() > 0 { edged.insert(role) }
        }
        return edged
    }

    /// Switches the optional feedback light; false when the board has none.
    @discardableResult
    public func setFeedbackLight(_ on: Bool) throws(GPIOError) -> Bool {
        guard let light = outputs[.feedbackLight] else { return false }
        try light.setActive(on)
        return true
    }

    /// Every line with its current level; unreadable lines show nil instead of failing the list.
    public func lineStates() -> [LineState] {
        let outs = outputs.sorted { $0.key < $1.key }.map { role, line in
            LineState(role: role.rawValue, isOutput: true, reference: line.reference, active: try? line.isActive())
        }
        let ins = inputs.sorted { $0.key < $1.key }.map { role, line in
            LineState(role: role.rawValue, isOutput: false, reference: line.reference, active: try? line.isActive())
        }
        return outs + ins
    }

    /// Gives every line back to the kernel (shutdown). Outputs were inactive unless a pulse was
    /// cut short; either way the released state is the safe one by board design.
    public func releaseAll() {
        outputs.values.forEach { $0.release() }
        inputs.values.forEach { $0.release() }
    }
}

// The car's GPIO at start-up: the board description, every line requested at its safe level,
// and the interlocked actuators. Real lines through libgpiod, or the simulated chip in
// --simulate (with the lock switch wired to follow the actuators, as on a real car).
//
// Done before anything else opens, so the outputs are pinned inactive as early as possible;
// a wrong board file or a missing chip or line stops the agent here, naming the role.
import CommandLineKit
import Drivers

struct VehicleHardware {
    let board: BoardDescription
    /// Where the description came from ("built-in simulated board" or a path).
    let boardSource: String
    let lines: BoardLines
    let actuators: LockActuators
    /// The simulated chip in --simulate (inputs driven by the `sim` console commands, and the
    /// recorded level changes shown by `gpio`); nil on real hardware.
    let simulated: SimulatedGPIO?
    /// The UWB module's IRQ line (board file uwb.interrupt), requested with the others.
    var uwbInterrupt: (any GPIOInputLine)? = nil

    static func open(boardFile: String?, simulate: Bool, clock: any MonotonicClock) throws -> VehicleHardware {
        let board = try description(boardFile: boardFile)
        let simulated = simulate ? SimulatedGPIO(clock: clock) : nil
        let backend: any GPIOBackend = simulated ?? LibgpiodBackend()
        let lines: BoardLines
        do {
            lines = try BoardLines(board: board, backend: backend)
        } catch {
            throw AgentStartFailure(description: "GPIO: \(error)")
        }
        if let simulated {
            simulated.wireFeedback(board: board)
            // A parked car: locked (the switch closed), doors, trunk and button at rest.
            simulated.setInput(role: InputRole.lockState.rawValue, active: true)
        }
        var uwbInterrupt: (any GPIOInputLine)?
        if let interrupt = board.uwb?.interrupt {
            do {
                uwbInterrupt = try backend.requestInput(interrupt, role: "uwbInterrupt")
            } catch {
                lines.releaseAll()
                throw AgentStartFailure(description: "GPIO: uwb.interrupt: \(error)")
            }
        }
        let actuators: LockActuators
        do {
            actuators = try LockActuators(lines: lines, clock: clock)
        } catch {
            lines.releaseAll()
            throw AgentStartFailure(description: "GPIO: \(error)")
        }
        return VehicleHardware(board: board, boardSource: boardFile ?? "built-in simulated board",
                               lines: lines, actuators: actuators, simulated: simulated, uwbInterrupt: uwbInterrupt)
    }

    /// A board-file mistake is a configuration error (exit 2, the key named); an unreadable
    /// file names the path.
    private static func description(boardFile: String?) throws -> BoardDescription {
        do throws(BoardDescriptionError) {
            if let boardFile { return try BoardDescription.load(path: boardFile) }
            return try BoardDescription.parse(Array(SimulatedBoard.json.utf8))
        } catch {
            let name = "board file \(boardFile ?? "(built in)")"
            switch error {
            case .unreadable: throw UsageError("\(error)")
            case .malformedJSON(let reason): throw UsageError("\(name): not valid JSON (\(reason))")
            default: throw UsageError("\(name): \(error)")
            }
        }
    }
}

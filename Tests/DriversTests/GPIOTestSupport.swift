// Shared fixtures for the GPIO tests: the repository's board files and a simulated board.
import Synchronization
import XCTest
@testable import Drivers

enum GPIOFixtures {
    /// The repository root, found from this file's path (Tests/DriversTests/<file>).
    static var repositoryRoot: String {
        var parts = String(#filePath).split(separator: "/", omittingEmptySubsequences: false)
        parts.removeLast(3)
        return parts.joined(separator: "/")
    }

    static func boardPath(_ name: String) -> String { repositoryRoot + "/board/\(name).json" }

    static func simulatedBoard() throws -> BoardDescription {
        try BoardDescription.load(path: boardPath("simulated"))
    }

    /// A simulated board with lines requested and feedback wired, on a manual clock.
    static func makeRig(pulseWidth: UInt64 = 300, settle: UInt64 = 150, wireFeedback: Bool = true) throws
        -> (board: BoardDescription, clock: ManualClock, chip: SimulatedGPIO, lines: BoardLines, actuators: LockActuators)
    {
        var board = try simulatedBoard()
        board.pulseWidthMillis = pulseWidth
        board.feedbackSettleMillis = settle
        let clock = ManualClock(startMillis: 1_000)
        let chip = SimulatedGPIO(clock: clock)
        if wireFeedback { chip.wireFeedback(board: board) }
        let lines = try BoardLines(board: board, backend: chip)
        let actuators = try LockActuators(lines: lines, clock: clock)
        return (board, clock, chip, lines, actuators)
    }
}

extension BoardDescription {
    /// Parses a JSON string (tests write small documents inline).
    static func parse(json: String) throws(BoardDescriptionError) -> BoardDescription {
        try parse(Array(json.utf8))
    }
}

/// A value shared between test threads and closures (a Mutex cannot be captured by a closure).
final class LockedBox<Value: Sendable>: Sendable {
    private let mutex: Mutex<Value>
    init(_ value: Value) { mutex = Mutex(value) }
    var value: Value { mutex.withLock { $0 } }
    func update(_ body: (inout Value) -> Void) { mutex.withLock { body(&$0) } }
}

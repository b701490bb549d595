// Inputs report edges on a descriptor (the shape of a libgpiod line-event request), so the agent
// sleeps instead of sampling: the simulated chip's descriptor becomes readable when, and only
// when, the level changes, including when the actuator's feedback switch moves.
import XCTest
@testable import Drivers

final class GPIOEdgeEventTests: XCTestCase {
    private func isReadable(_ descriptor: FileDescriptor) throws -> Bool {
        try Poll.wait([(descriptor, .readable)], timeoutMillis: 0)[0].contains(.readable)
    }

    func testAnInputEdgeMakesItsDescriptorReadableUntilDrained() throws {
        let chip = SimulatedGPIO(clock: ManualClock())
        let config = GPIOLineConfig(chip: "sim-gpio", line: 5, activeLow: true, bias: .pullUp)
        let line = try chip.requestInput(config, role: "doorOpen")
        let descriptor = try XCTUnwrap(line.edgeDescriptor, "a simulated input reports edges")
        XCTAssertFalse(try isReadable(descriptor), "quiet after the request")

        chip.setInput(config, active: true)
        XCTAssertTrue(try isReadable(descriptor), "an edge wakes a poll on the descriptor")
        XCTAssertEqual(try line.drainEdges(), 1)
        XCTAssertFalse(try isReadable(descriptor), "quiet again once drained")
        XCTAssertTrue(try line.isActive())

        chip.setInput(config, active: true)
        XCTAssertFalse(try isReadable(descriptor), "the same level again is no edge")
        XCTAssertTrue(chip.setInput(role: "doorOpen", active: false))
        chip.setInput(config, active: true)
        XCTAssertEqual(try line.drainEdges(), 2, "edges collapse into one wake-up but are counted")

        line.release()
        XCTAssertThrowsError(try line.drainEdges()) {
            XCTAssertEqual($0 as? GPIOError, .released(GPIOLineReference(role: "doorOpen", chip: "sim-gpio", line: 5)))
        }
    }

    func testFeedbackFromALockPulseIsAnEdgeOnTheLockStateInput() throws {
        let chip = SimulatedGPIO(clock: ManualClock())
        let lock = GPIOLineConfig(chip: "sim-gpio", line: 1)
        let unlock = GPIOLineConfig(chip: "sim-gpio", line: 2)
        let state = GPIOLineConfig(chip: "sim-gpio", line: 3)
        let lockLine = try chip.requestOutput(lock, role: "lock")
        _ = try chip.requestOutput(unlock, role: "unlock")
        let input = try chip.requestInput(state, role: "lockState")
        chip.wireFeedback(lock: lock, unlock: unlock, lockState: state)
        let descriptor = try XCTUnwrap(input.edgeDescriptor)
        try lockLine.setActive(true)
        XCTAssertTrue(try isReadable(descriptor))
        XCTAssertEqual(try input.drainEdges(), 1)
        try lockLine.setActive(false)
        try lockLine.setActive(true)
        XCTAssertFalse(try isReadable(descriptor), "already locked: the switch does not move")
    }

    func testOutputsHaveNoEdgeDescriptorAndBoardLinesListEveryInput() throws {
        let chip = SimulatedGPIO(clock: ManualClock())
        let board = try GPIOFixtures.simulatedBoard()
        let lines = try BoardLines(board: board, backend: chip)
        defer { lines.releaseAll() }
        XCTAssertTrue(lines.allInputsReportEdges)
        XCTAssertEqual(lines.inputEdgeDescriptors.map(\.role), board.inputs.keys.sorted())
        XCTAssertEqual(try lines.drainEdges(board.inputs.keys.sorted()), [])
        XCTAssertTrue(chip.setInput(role: "trunkOpen", active: true))
        XCTAssertEqual(try lines.drainEdges(board.inputs.keys.sorted()), [.trunkOpen])
    }
}

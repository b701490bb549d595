// The GPIO-backed actuator in process, on the simulated chip and a virtual clock: pulses run on
// the worker and come back through the completion descriptor; busy refusals move nothing; a
// feedback mismatch is actuationFailed plus an actuator-fault row; the state follows the inputs.
import XCTest
import Drivers
import Protocol
@testable import carkey_agent

final class GPIOActuatorTests: XCTestCase {
    private var folder = ""
    private var store: CarStore!
    private var clock: ManualClock!
    private var hardware: VehicleHardware!
    private var actuator: GPIOActuator!
    private var chip: SimulatedGPIO { hardware.simulated! }

    override func setUpWithError() throws {
        folder = AgentTestSupport.temporaryDirectory()
        store = try CarStore.open(stateDirectory: folder + "/state")
        clock = ManualClock(startMillis: 10_000)
        hardware = try VehicleHardware.open(boardFile: nil, simulate: true, clock: clock)
        var monitor = InputMonitor(board: hardware.board)
        let initial = try InputSampler.initialStates(hardware.lines, monitor: &monitor, clock: clock)
        actuator = try GPIOActuator(hardware: hardware, initialInputs: initial,
                                    events: VehicleEvents(store: store, clock: AgentClock(), log: AgentLog(prefix: "test")), clock: clock)
    }

    override func tearDown() {
        actuator?.close()
        hardware?.lines.releaseAll()
        AgentTestSupport.removeTree(folder)
    }

    /// Waits (bounded, real time) for the worker's wake-up, then takes the result.
    private func finished() throws -> GPIOActuator.Finished {
        let ready = try Poll.wait([(actuator.completionDescriptor, .readable)], timeoutMillis: 5000)
        XCTAssertFalse(ready[0].isEmpty, "the pulse ended within 5 s")
        return try XCTUnwrap(actuator.takeFinished())
    }

    private func activations(_ role: OutputRole) -> Int {
        chip.changes(role: role.rawValue).filter { $0.active && !$0.initial }.count
    }

    func testUnlockPulsesTheUnlockLineOnTheWorker() throws {
        XCTAssertEqual(actuator.state, [.locked, .trunkLocked], "the simulated car starts locked")
        XCTAssertNil(actuator.startService(.unlock), "started")
        XCTAssertEqual(actuator.inProgress, .unlock)
        let done = try finished()
        XCTAssertNil(done.outcome.fault)
        XCTAssertEqual(done.actuation, .unlock)
        XCTAssertEqual(done.outcome.state, [.trunkLocked])
        XCTAssertEqual(done.outcome.summary, "unlock pulsed on unlock (chip sim-gpio, line 27) for 300 ms, lock state confirmed unlocked")
        let unlock = chip.changes(role: "unlock").filter { !$0.initial }
        XCTAssertEqual(unlock.map(\.active), [true, false])
        XCTAssertEqual(unlock[1].atMillis - unlock[0].atMillis, 300, "the board's pulse width")
        XCTAssertEqual(activations(.lock) + activations(.trunkRelease), 0)
        XCTAssertNil(actuator.inProgress)
        XCTAssertEqual(try store.events(), [], "a confirmed pulse is no fault")
    }

    func testACommandWhileOneRunsIsBusyAndMovesNothing() throws {
        XCTAssertNil(actuator.startService(.unlock))
        let refused = try XCTUnwrap(actuator.startService(.lock))
        XCTAssertEqual(refused.fault, .busy)
        XCTAssertEqual(refused.summary, "lock refused: busy, unlock in progress")
        _ = try finished()
        XCTAssertEqual(activations(.lock), 0, "the refused lock never reached a line")
        XCTAssertEqual(activations(.unlock), 1)
        XCTAssertNil(actuator.startService(.lock), "free again once the first one was taken")
        XCTAssertNil(try finished().outcome.fault)
        XCTAssertEqual(actuator.state, [.locked, .trunkLocked])
    }

    func testFeedbackMismatchIsAFaultAndAnEvent() throws {
        chip.setFeedbackBroken(true)
        XCTAssertNil(actuator.startService(.unlock))
        let done = try finished()
        XCTAssertEqual(done.outcome.fault, .actuationFailed)
        XCTAssertEqual(done.outcome.state, [.locked, .trunkLocked], "the switch still says locked")
        XCTAssertTrue(done.outcome.summary.hasSuffix("but the lock state reads locked (expected unlocked): actuator fault"), done.outcome.summary)
        let events = try store.events()
        XCTAssertEqual(events.count, 1)
        let event = events[0].event
        XCTAssertEqual(event.kind, .actuatorFault)
        XCTAssertEqual([event.action, event.result], ["unlock", "mismatch"])
        XCTAssertNil(event.actor, "a console test has no key")
        XCTAssertEqual(event.fault, EventFault(code: 26, name: "actuationFailed"))
        XCTAssertEqual(event.detailJSON, #"{"source":"console","line":"unlock","chip":"sim-gpio","offset":27,"expected":"unlocked","observed":"locked"}"#)
    }

    func testTrunkReleaseHasNoLockFeedback() throws {
        XCTAssertNil(actuator.startService(.trunkRelease))
        let done = try finished()
        XCTAssertNil(done.outcome.fault)
        XCTAssertEqual(done.outcome.summary, "trunk pulsed on trunkRelease (chip sim-gpio, line 22) for 300 ms")
        XCTAssertEqual(activations(.trunkRelease), 1)
    }

    func testShutdownWaitsForTheRunningPulse() throws {
        XCTAssertNil(actuator.startService(.lock))
        let done = try XCTUnwrap(actuator.finishRunning())
        XCTAssertEqual(done.actuation, .lock)
        XCTAssertEqual(chip.changes(role: "lock").last?.active, false, "the line is inactive before anything is released")
        XCTAssertNil(actuator.finishRunning(), "nothing left")
    }

    func testOurOwnPulseIsNoNewsButAKeyTurnedByHandIs() throws {
        XCTAssertNil(actuator.startService(.unlock))
        _ = try finished()
        XCTAssertFalse(actuator.inputChanged(.lockState, active: false, atMillis: clock.nowMillis() + 100), "the switch following our pulse")
        XCTAssertTrue(actuator.inputChanged(.lockState, active: true, atMillis: clock.nowMillis() + 200), "locked by hand: news")
        XCTAssertTrue(actuator.inputChanged(.doorOpen, active: true, atMillis: clock.nowMillis() + 300))
        XCTAssertEqual(actuator.state, [.locked, .anyDoorOpen, .trunkLocked])
    }
}

// Input sampling on the agent loop, on a virtual clock: debounced changes update the state and
// the event log, a flapping input cannot flood the log, and a 5 s press asks for pairing once.
import XCTest
import Drivers
import Protocol
@testable import carkey_agent

final class InputSamplerTests: XCTestCase {
    private var folder = ""
    private var store: CarStore!
    private var clock: ManualClock!
    private var hardware: VehicleHardware!
    private var actuator: GPIOActuator!
    private var sampler: InputSampler!
    private var chip: SimulatedGPIO { hardware.simulated! }

    override func setUpWithError() throws {
        folder = AgentTestSupport.temporaryDirectory()
        store = try CarStore.open(stateDirectory: folder + "/state")
        clock = ManualClock(startMillis: 10_000)
        hardware = try VehicleHardware.open(boardFile: nil, simulate: true, clock: clock)
        var monitor = InputMonitor(board: hardware.board)
        let initial = try InputSampler.initialStates(hardware.lines, monitor: &monitor, clock: clock)
        let events = VehicleEvents(store: store, clock: AgentClock(), log: AgentLog(prefix: "test"))
        actuator = try GPIOActuator(hardware: hardware, initialInputs: initial, events: events, clock: clock)
        sampler = InputSampler(actuator: actuator, monitor: monitor, events: events, clock: clock, log: AgentLog(prefix: "test"))
    }

    override func tearDown() {
        actuator?.close()
        hardware?.lines.releaseAll()
        AgentTestSupport.removeTree(folder)
    }

    /// Runs the sampler every 10 ms of virtual time for `millis`.
    private func run(for millis: UInt64) {
        let end = clock.nowMillis() + millis
        while clock.nowMillis() < end {
            clock.advance(by: InputSampler.intervalMillis)
            sampler.process([], nowMillis: clock.nowMillis())
        }
    }

    private func stateRows() throws -> [StoredEvent] {
        try store.events().filter { $0.event.kind.rawValue == "vehicle-state" }
    }

    func testADoorChangeIsDebouncedRecordedAndReported() throws {
        var reported = 0
        sampler.onStateChanged = { reported += 1 }
        chip.setInput(role: "doorOpen", active: true)
        run(for: 20)
        XCTAssertFalse(actuator.stateModel.doorOpen, "not yet: 30 ms debounce")
        chip.setInput(role: "doorOpen", active: false)
        run(for: 100)
        XCTAssertEqual(try stateRows(), [], "a bounce is no change")
        chip.setInput(role: "doorOpen", active: true)
        run(for: 50)
        XCTAssertTrue(actuator.stateModel.doorOpen)
        XCTAssertEqual(reported, 1)
        XCTAssertEqual(try stateRows().map { [$0.event.action, $0.event.result] }, [["doorOpen", "active"]])
    }

    func testAFlappingInputIsBoundedPerMinute() throws {
        for _ in 0..<30 {
            chip.setInput(role: "trunkOpen", active: true)
            run(for: 50)
            chip.setInput(role: "trunkOpen", active: false)
            run(for: 50)
        }
        XCTAssertEqual(try stateRows().count, InputSampler.maxRowsPerWindow, "60 changes, at most 20 rows in the minute")
        run(for: InputSampler.windowMillis)
        chip.setInput(role: "trunkOpen", active: true)
        run(for: 50)
        let last = try XCTUnwrap(try stateRows().last)
        XCTAssertEqual(last.event.detailJSON, #"{"suppressed":40}"#, "the next row carries the count of those left out")
    }

    func testHoldingThePairingButtonAsksOnce() {
        var requests = 0
        sampler.onPairingRequested = { requests += 1 }
        chip.setInput(role: "pairingButton", active: true)
        run(for: 4900)
        XCTAssertEqual(requests, 0)
        run(for: 200)
        XCTAssertEqual(requests, 1)
        run(for: 10_000)
        XCTAssertEqual(requests, 1, "once per press")
        chip.setInput(role: "pairingButton", active: false)
        run(for: 100)
        chip.setInput(role: "pairingButton", active: true)
        run(for: 5100)
        XCTAssertEqual(requests, 2)
    }
}

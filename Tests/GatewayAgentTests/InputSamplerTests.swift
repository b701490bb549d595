// Input sampling on the agent loop, on a virtual clock: debounced changes update the state and
// the event log, a flapping input cannot flood the log, and a 5 s press asks for pairing once.
// The loop is emulated as the agent runs it: a round when an edge descriptor is readable or the
// sampler's deadline comes, nothing otherwise (an idle car costs no rounds).
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
        try build(try VehicleHardware.open(boardFile: nil, simulate: true, clock: clock))
    }

    private func build(_ hardware: VehicleHardware) throws {
        actuator?.close()
        self.hardware?.lines.releaseAll()
        self.hardware = hardware
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

    /// Runs the sampler as the agent loop would for `millis` of virtual time: a round whenever
    /// an edge descriptor is readable (inputs change only between runs, so that is at the
    /// start) or its deadline comes. Returns the number of rounds.
    @discardableResult
    private func run(for millis: UInt64) throws -> Int {
        let end = clock.nowMillis() + millis
        var rounds = 0
        while rounds < 100_000 {
            let set = sampler.pollSet()
            let ready = try Poll.wait(set, timeoutMillis: 0)
            if ready.contains(where: { !$0.isEmpty }) {
                sampler.process(ready, nowMillis: clock.nowMillis())
                rounds += 1
                continue
            }
            guard let due = sampler.nextDeadline(), due <= end else {
                clock.advance(by: end - clock.nowMillis())
                return rounds
            }
            if due > clock.nowMillis() { clock.advance(by: due - clock.nowMillis()) }
            sampler.process(Array(repeating: [], count: set.count), nowMillis: clock.nowMillis())
            rounds += 1
        }
        XCTFail("the sampler never went quiet")
        return rounds
    }

    private func stateRows() throws -> [StoredEvent] {
        try store.events().filter { $0.event.kind.rawValue == "vehicle-state" }
    }

    func testADoorChangeIsDebouncedRecordedAndReported() throws {
        var reported = 0
        sampler.onStateChanged = { reported += 1 }
        chip.setInput(role: "doorOpen", active: true)
        try run(for: 20)
        XCTAssertFalse(actuator.stateModel.doorOpen, "not yet: 30 ms debounce")
        chip.setInput(role: "doorOpen", active: false)
        try run(for: 100)
        XCTAssertEqual(try stateRows(), [], "a bounce is no change")
        chip.setInput(role: "doorOpen", active: true)
        try run(for: 50)
        XCTAssertTrue(actuator.stateModel.doorOpen)
        XCTAssertEqual(reported, 1)
        XCTAssertEqual(try stateRows().map { [$0.event.action, $0.event.result] }, [["doorOpen", "active"]])
    }

    func testAFlappingInputIsBoundedPerMinute() throws {
        for _ in 0..<30 {
            chip.setInput(role: "trunkOpen", active: true)
            try run(for: 50)
            chip.setInput(role: "trunkOpen", active: false)
            try run(for: 50)
        }
        XCTAssertEqual(try stateRows().count, InputSampler.maxRowsPerWindow, "60 changes, at most 20 rows in the minute")
        try run(for: InputSampler.windowMillis)
        chip.setInput(role: "trunkOpen", active: true)
        try run(for: 50)
        let last = try XCTUnwrap(try stateRows().last)
        XCTAssertEqual(last.event.detailJSON, #"{"suppressed":40}"#, "the next row carries the count of those left out")
    }

    func testHoldingThePairingButtonAsksOnce() throws {
        var requests = 0
        sampler.onPairingRequested = { requests += 1 }
        chip.setInput(role: "pairingButton", active: true)
        try run(for: 4900)
        XCTAssertEqual(requests, 0)
        try run(for: 200)
        XCTAssertEqual(requests, 1)
        try run(for: 10_000)
        XCTAssertEqual(requests, 1, "once per press")
        chip.setInput(role: "pairingButton", active: false)
        try run(for: 100)
        chip.setInput(role: "pairingButton", active: true)
        try run(for: 5100)
        XCTAssertEqual(requests, 2)
    }

    func testAnIdleCarCostsNoRoundsAndAnEdgeOnlyItsDebounce() throws {
        try run(for: 100) // the simulated board sets its inputs' levels at start-up: edges
        XCTAssertEqual(try run(for: 60_000), 0, "nothing changes: no sampling at all")
        XCTAssertNil(sampler.nextDeadline())
        chip.setInput(role: "doorOpen", active: true)
        XCTAssertEqual(try run(for: 60_000), 2, "the edge, then once when the 30 ms window has passed")
        XCTAssertTrue(actuator.stateModel.doorOpen)
        XCTAssertNil(sampler.nextDeadline(), "settled: back to waiting for edges only")
    }

    func testThePairingHoldHasADeadlineOnlyWhileTheButtonIsDown() throws {
        chip.setInput(role: "pairingButton", active: true)
        let pressed = clock.nowMillis()
        try run(for: 100)
        XCTAssertEqual(sampler.nextDeadline(), pressed + 5000, "the hold time, measured from the first contact")
        chip.setInput(role: "pairingButton", active: false)
        try run(for: 100)
        XCTAssertNil(sampler.nextDeadline(), "released before the hold time: no deadline left")
    }

    func testAChipWithoutEdgeInterruptsIsSampledEvery10Milliseconds() throws {
        // The same simulated chip, but its inputs offer no edge descriptor.
        let board = hardware.board
        actuator.close()
        hardware.lines.releaseAll()
        actuator = nil
        let chip = SimulatedGPIO(clock: clock)
        let lines = try BoardLines(board: board, backend: EdgelessBackend(chip: chip))
        try build(VehicleHardware(board: board, boardSource: "test", lines: lines,
                                  actuators: try LockActuators(lines: lines, clock: clock), simulated: chip))
        XCTAssertEqual(sampler.pollSet().count, 0)
        XCTAssertNotNil(sampler.nextDeadline(), "no edges to wait for: sampling")
        XCTAssertEqual(try run(for: 1000), 101, "at once, then every 10 ms")
        chip.setInput(role: "doorOpen", active: true)
        try run(for: 50)
        XCTAssertTrue(actuator.stateModel.doorOpen, "seen and debounced by sampling alone")
    }
}

/// Input lines without edge reporting (a GPIO expander without an interrupt line).
final class EdgelessBackend: GPIOBackend {
    let chip: SimulatedGPIO
    init(chip: SimulatedGPIO) { self.chip = chip }
    func requestOutput(_ config: GPIOLineConfig, role: String) throws(GPIOError) -> any GPIOOutputLine {
        try chip.requestOutput(config, role: role)
    }
    func requestInput(_ config: GPIOLineConfig, role: String) throws(GPIOError) -> any GPIOInputLine {
        EdgelessInput(inner: try chip.requestInput(config, role: role))
    }
}

final class EdgelessInput: GPIOInputLine {
    let inner: any GPIOInputLine
    init(inner: any GPIOInputLine) { self.inner = inner }
    var reference: GPIOLineReference { inner.reference }
    var edgeDescriptor: FileDescriptor? { nil }
    func isActive() throws(GPIOError) -> Bool { try inner.isActive() }
    func drainEdges() throws(GPIOError) -> Int { 0 }
    func release() { inner.release() }
}

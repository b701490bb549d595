// The libgpiod backend's start-up errors (this kernel has no GPIO) and the simulated chip's rules.
import XCTest
@testable import Drivers

final class GPIOBackendTests: XCTestCase {
    func testLibgpiodMissingChipByLabelIsNamed() {
        let backend = LibgpiodBackend()
        let config = GPIOLineConfig(chip: "pinctrl-nonexistent", line: 17)
        XCTAssertThrowsError(try backend.requestOutput(config, role: "lock")) { error in
            XCTAssertEqual(error as? GPIOError, .chipNotFound(chip: .label("pinctrl-nonexistent"), role: "lock"))
            XCTAssertTrue("\(error)".contains("lock: GPIO chip with label pinctrl-nonexistent not found"), "\(error)")
        }
    }

    func testLibgpiodMissingChipByNameAndPathIsNamed() {
        let backend = LibgpiodBackend()
        XCTAssertThrowsError(try backend.requestInput(GPIOLineConfig(chip: "gpiochip99", line: 0), role: "doorOpen")) {
            XCTAssertEqual($0 as? GPIOError, .chipNotFound(chip: .name("gpiochip99"), role: "doorOpen"))
        }
        XCTAssertThrowsError(try backend.requestInput(GPIOLineConfig(chip: "/dev/gpiochip99", line: 0), role: "doorOpen")) {
            XCTAssertEqual($0 as? GPIOError, .chipNotFound(chip: .path("/dev/gpiochip99"), role: "doorOpen"))
        }
    }

    func testLibgpiodNonGPIODeviceIsNotAChip() {
        XCTAssertThrowsError(try LibgpiodBackend().requestInput(GPIOLineConfig(chip: "/dev/null", line: 0), role: "doorOpen")) {
            XCTAssertEqual($0 as? GPIOError, .chipNotFound(chip: .path("/dev/null"), role: "doorOpen"))
        }
    }

    func testShippedPiBoardFailsCleanlyWithoutGPIO() throws {
        let board = try BoardDescription.load(path: GPIOFixtures.boardPath("raspberrypi5-uwb"))
        XCTAssertThrowsError(try BoardLines(board: board, backend: LibgpiodBackend())) {
            // Outputs are requested first, in role order: lock is the first thing that fails.
            XCTAssertEqual($0 as? GPIOError, .chipNotFound(chip: .label("pinctrl-rp1"), role: "lock"))
        }
        XCTAssertFalse(LibgpiodBackend.libraryVersion.isEmpty)
    }

    func testSimulatedMissingChipAndOutOfRangeLine() throws {
        let chip = SimulatedGPIO(clock: ManualClock(), lineCount: 54, chips: ["sim-gpio"])
        XCTAssertThrowsError(try chip.requestOutput(GPIOLineConfig(chip: "gpiochip4", line: 1), role: "lock")) {
            XCTAssertEqual($0 as? GPIOError, .chipNotFound(chip: .name("gpiochip4"), role: "lock"))
        }
        XCTAssertThrowsError(try chip.requestOutput(GPIOLineConfig(chip: "sim-gpio", line: 54), role: "lock")) {
            let reference = GPIOLineReference(role: "lock", chip: "sim-gpio", line: 54)
            XCTAssertEqual($0 as? GPIOError, .lineOutOfRange(reference, lineCount: 54))
            XCTAssertTrue("\($0)".contains("lock (chip sim-gpio, line 54): offset out of range"), "\($0)")
        }
    }

    func testSimulatedBusyLineNamesTheHolder() throws {
        let chip = SimulatedGPIO(clock: ManualClock())
        let config = GPIOLineConfig(chip: "sim-gpio", line: 3)
        _ = try chip.requestOutput(config, role: "lock")
        XCTAssertThrowsError(try chip.requestInput(config, role: "doorOpen")) {
            XCTAssertEqual($0 as? GPIOError, .lineBusy(GPIOLineReference(role: "doorOpen", chip: "sim-gpio", line: 3), consumer: "carkey:lock"))
        }
    }

    func testBoardLinesReleasesEverythingWhenOneRequestFails() throws {
        var board = try GPIOFixtures.simulatedBoard()
        board.inputs[.pairingButton]?.line = 60 // out of range: the last request fails
        let chip = SimulatedGPIO(clock: ManualClock())
        XCTAssertThrowsError(try BoardLines(board: board, backend: chip))
        for config in Array(board.outputs.values) + Array(board.inputs.values) {
            XCTAssertFalse(chip.isRequested(config), "\(config) left requested")
        }
    }

    func testReleasedLinesRefuseUse() throws {
        let rig = try GPIOFixtures.makeRig()
        rig.lines.releaseAll()
        XCTAssertThrowsError(try rig.actuators.pulse(.lock)) {
            XCTAssertEqual($0 as? ActuationError, .gpio(.released(GPIOLineReference(role: "lock", chip: "sim-gpio", line: 17))))
        }
        XCTAssertThrowsError(try rig.lines.readInputs())
    }

    func testLineStatesAndFeedbackLight() throws {
        let rig = try GPIOFixtures.makeRig()
        XCTAssertTrue(try rig.lines.setFeedbackLight(true))
        let states = rig.lines.lineStates()
        XCTAssertEqual(states.map(\.role), ["lock", "unlock", "trunkRelease", "feedbackLight", "doorOpen", "trunkOpen", "lockState", "pairingButton", "doorHandle"])
        XCTAssertEqual(states.first { $0.role == "feedbackLight" }?.active, true)
        XCTAssertEqual(states.first { $0.role == "lock" }?.active, false)
        XCTAssertTrue(states.allSatisfy { $0.active != nil })
    }

    func testSetInputByRole() throws {
        let rig = try GPIOFixtures.makeRig()
        XCTAssertTrue(rig.chip.setInput(role: "trunkOpen", active: true))
        XCTAssertFalse(rig.chip.setInput(role: "lock", active: true), "outputs cannot be forced from outside")
        XCTAssertEqual(try rig.lines.readInputs()[.trunkOpen], true)
    }

    func testManualClockRecordsSleepsAndAdvances() {
        let clock = ManualClock(startMillis: 5)
        clock.sleep(millis: 20)
        clock.advance(by: 7)
        clock.sleep(millis: 3)
        XCTAssertEqual(clock.nowMillis(), 35)
        XCTAssertEqual(clock.sleeps, [20, 3])
    }

    func testSystemClockIsMonotonicAndSleeps() {
        // The one real sleep in these tests, 5 ms, to check nanosleep is actually called.
        let clock = SystemClock()
        let before = clock.nowMillis()
        clock.sleep(millis: 5)
        XCTAssertGreaterThanOrEqual(clock.nowMillis() - before, 5)
    }
}

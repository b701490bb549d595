// The simulated chip's record of output levels over a long run: bounded, newest kept, counts exact.
import XCTest
@testable import Drivers

final class SimulatedGPIOTests: XCTestCase {
    /// A simulated car that unlocks for weeks: the record stays within twice its limit (an
    /// unbounded one held every pulse ever made: 20 000 here), the newest changes are the ones
    /// kept, in order, and the activation count still counts every pulse.
    func testTheRecordOfLevelChangesIsBoundedAndKeepsTheNewest() throws {
        let clock = ManualClock()
        let chip = SimulatedGPIO(clock: clock, historyLimit: 64)
        let unlock = try chip.requestOutput(GPIOLineConfig(chip: "sim-gpio", line: 27), role: "unlock")
        let lock = try chip.requestOutput(GPIOLineConfig(chip: "sim-gpio", line: 17), role: "lock")
        var largest = 0
        for pulse in 0..<5_000 {
            clock.advance(by: 1)
            try unlock.setActive(true)
            try unlock.setActive(false)
            if pulse.isMultiple(of: 2) {
                try lock.setActive(true)
                try lock.setActive(false)
            }
            largest = max(largest, chip.changes.count)
        }
        XCTAssertLessThanOrEqual(largest, 128, "held at most twice the limit at any time")
        let kept = chip.changes
        XCTAssertGreaterThanOrEqual(kept.count, 64, "at least the limit is kept")
        XCTAssertEqual(kept.last, SimulatedGPIO.LevelChange(role: "unlock", chip: "sim-gpio", line: 27, active: false, physicalHigh: false,
                                                           atMillis: 5_000, initial: false), "the newest change is last")
        XCTAssertEqual(kept.map(\.atMillis), kept.map(\.atMillis).sorted(), "in order")
        XCTAssertEqual(chip.activations(role: "unlock"), 5_000)
        XCTAssertEqual(chip.activations(role: "lock"), 2_500)
        XCTAssertEqual(chip.activations(role: "trunkRelease"), 0)
    }

    /// Below the limit nothing is dropped: the request's own level is still the first entry.
    func testAShortRunKeepsEveryChangeFromTheRequestOn() throws {
        let chip = SimulatedGPIO(clock: ManualClock(), historyLimit: 64)
        let unlock = try chip.requestOutput(GPIOLineConfig(chip: "sim-gpio", line: 27), role: "unlock")
        for _ in 0..<10 {
            try unlock.setActive(true)
            try unlock.setActive(false)
        }
        XCTAssertEqual(chip.changes.count, 21)
        XCTAssertEqual(chip.changes.first?.initial, true)
        XCTAssertEqual(chip.activations(role: "unlock"), 10)
    }
}

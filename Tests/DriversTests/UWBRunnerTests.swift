// The runner's two real-board modes: woken by the IRQ line's descriptor (here a simulated GPIO
// input driven by the chip's IRQ level, polled like the agent's loop does), and the blocking
// round with SYS_STATUS polling when the board has no IRQ line.
import XCTest
@testable import Drivers
import Protocol

final class UWBRunnerTests: XCTestCase {
    func testRoundDrivenByTheIRQDescriptor() throws {
        let pair = try UWBRangingPair(air: UWBFixture.air(seed: 21))
        let gpio = SimulatedGPIO(clock: ManualClock())
        let irq = GPIOLineConfig(chip: "gpiochip0", line: 25)
        let line = try gpio.requestInput(irq, role: "uwbInterrupt")
        pair.phoneChip.onInterrupt = nil
        pair.phoneChip.onInterruptLevel = { gpio.setInput(irq, active: $0) }
        let runner = UWBRangingRunner(driver: pair.phone, role: TestResponder(), interruptLine: line)
        let fd = try XCTUnwrap(runner.interruptDescriptor)
        try runner.startRound()
        try pair.initiator.startRound()
        var wakeUps = 0
        // The agent's loop in miniature: run the world, and whenever the descriptor is readable
        // service the chip (each wake-up 30 us after the event, like the connected car side).
        while pair.air.step() {
            if try Poll.wait([(fd, .readable)], timeoutMillis: 0).first?.contains(.readable) == true {
                wakeUps += 1
                pair.air.advance(byMicros: 30)
                try runner.interruptReadable()
            }
        }
        guard case .range(let measurement)? = runner.lastOutcome else { return XCTFail("no range: \(String(describing: runner.lastOutcome))") }
        XCTAssertEqual(measurement.distanceMetres, 1.5, accuracy: 0.02)
        // Poll received, Response sent, Final received: three rises, and the line reports the
        // three falls too (each costs the runner one SYS_STATUS read that finds nothing).
        XCTAssertEqual(wakeUps, 6)
        XCTAssertFalse(pair.phoneChip.irqAsserted)
    }

    func testBlockingRoundWithPolling() throws {
        let air = UWBFixture.air(seed: 22, metres: 4)
        let pair = try UWBRangingPair(air: air)
        // Polling every millisecond adds up to 1 ms before each reaction: the replies get room.
        let car = UWBRangingRunner(driver: pair.car, role: TestInitiator(finalDelayMicros: 3000, windowMicros: 10_000),
                                   pollIntervalMillis: 1)
        pair.carChip.onInterrupt = nil
        let phone = UWBRangingRunner(driver: pair.phone, role: TestResponder(windowMicros: 10_000))
        air.connect(phone, to: pair.phoneChip)
        try phone.startRound()
        let outcome = try car.runRound(timeoutMillis: 50, clock: AirClock(air: air))
        XCTAssertEqual(outcome, .completed)
        air.runUntilIdle()
        guard case .range(let measurement)? = phone.lastOutcome else { return XCTFail("no range") }
        XCTAssertEqual(measurement.distanceMetres, 4, accuracy: 0.02)
    }

    func testBlockingRoundTimesOut() throws {
        let air = UWBFixture.air(seed: 23, metres: 200)
        let pair = try UWBRangingPair(air: air)
        pair.carChip.onInterrupt = nil
        let car = UWBRangingRunner(driver: pair.car, role: TestInitiator(windowMicros: 0), pollIntervalMillis: 2)
        let start = air.nowPicoseconds
        XCTAssertEqual(try car.runRound(timeoutMillis: 20, clock: AirClock(air: air)), .failed(.timeout))
        XCTAssertFalse(car.isRunning)
        XCTAssertEqual(Double(air.nowPicoseconds - start) / 1e9, 20, accuracy: 2.1)
    }
}

// Debounce and the pairing-button long press, driven by sample sequences on virtual time.
import XCTest
@testable import Drivers

final class GPIOInputMonitorTests: XCTestCase {
    /// Feeds `raw` every `step` ms from `start` and collects every change.
    private func run(_ debouncer: inout Debouncer, _ raw: [Bool], start: UInt64 = 0, step: UInt64 = 5) -> [DebouncedChange] {
        var changes: [DebouncedChange] = []
        for (index, value) in raw.enumerated() {
            if let change = debouncer.feed(value, atMillis: start + UInt64(index) * step) { changes.append(change) }
        }
        return changes
    }

    func testBouncesShorterThanTheWindowAreIgnored() {
        var debouncer = Debouncer(windowMillis: 30, initial: false)
        // 5 ms samples: bursts of up to 25 ms active, always back to inactive before 30 ms.
        let bouncy = [true, false, true, true, false, true, true, true, true, true, false, false]
        XCTAssertEqual(run(&debouncer, bouncy), [])
        XCTAssertFalse(debouncer.stable)
    }

    func testAStableChangeIsReportedOnceAfterTheWindow() {
        var debouncer = Debouncer(windowMillis: 30, initial: false)
        // Two bounces, then active from 20 ms on for 100 ms.
        let raw = [false, true, false, false, true] + Array(repeating: true, count: 20)
        let changes = run(&debouncer, raw)
        XCTAssertEqual(changes, [DebouncedChange(active: true, sinceMillis: 20, atMillis: 50)])
        XCTAssertTrue(debouncer.stable)
    }

    func testReleaseIsDebouncedToo() {
        var debouncer = Debouncer(windowMillis: 30, initial: true)
        let raw = [true, false, true, false, false, false, false, false, false, false]
        XCTAssertEqual(run(&debouncer, raw), [DebouncedChange(active: false, sinceMillis: 15, atMillis: 45)])
    }

    func testZeroWindowReportsImmediately() {
        var debouncer = Debouncer(windowMillis: 0, initial: false)
        XCTAssertEqual(run(&debouncer, [true, false]), [DebouncedChange(active: true, sinceMillis: 0, atMillis: 0),
                                                       DebouncedChange(active: false, sinceMillis: 5, atMillis: 5)])
    }

    func testMonitorReportsDoorChangesAndTakesTheFirstSampleAsState() {
        var monitor = InputMonitor(debounceMillis: 30, pairingHoldMillis: 5000)
        XCTAssertEqual(monitor.update([.doorOpen: false, .trunkOpen: true], atMillis: 0), [])
        XCTAssertEqual(monitor.states, [.doorOpen: false, .trunkOpen: true])
        var events: [InputEvent] = []
        for t in stride(from: UInt64(10), through: 100, by: 10) {
            events += monitor.update([.doorOpen: t >= 20, .trunkOpen: true], atMillis: t)
        }
        XCTAssertEqual(events, [.changed(.doorOpen, active: true, atMillis: 50)])
        XCTAssertEqual(monitor.states[.doorOpen], true)
    }

    /// Samples the pairing button every 10 ms with `pressed(t)` and returns the events.
    private func runButton(_ monitor: inout InputMonitor, from: UInt64, to: UInt64, pressed: (UInt64) -> Bool) -> [InputEvent] {
        var events: [InputEvent] = []
        for t in stride(from: from, through: to, by: 10) {
            events += monitor.update([.pairingButton: pressed(t)], atMillis: t)
        }
        return events
    }

    func testPairingButtonHeldFiveSecondsRequestsPairingOncePerPress() {
        var monitor = InputMonitor(debounceMillis: 30, pairingHoldMillis: 5000)
        // Pressed at 1000 ms, held until 9000 ms, then pressed again 10000...15500.
        let events = runButton(&monitor, from: 0, to: 16_000) { t in (1_000..<9_000).contains(t) || (10_000..<15_500).contains(t) }
        XCTAssertEqual(events, [
            .changed(.pairingButton, active: true, atMillis: 1_030),
            .pairingRequested(atMillis: 6_000),
            .changed(.pairingButton, active: false, atMillis: 9_030),
            .changed(.pairingButton, active: true, atMillis: 10_030),
            .pairingRequested(atMillis: 15_000),
            .changed(.pairingButton, active: false, atMillis: 15_530),
        ])
    }

    func testShortPressesDoNotRequestPairing() {
        var monitor = InputMonitor(debounceMillis: 30, pairingHoldMillis: 5000)
        // 4.9 s press, a bounce, then another 4.9 s: the hold restarts after a real release.
        let events = runButton(&monitor, from: 0, to: 12_000) { t in (100..<5_000).contains(t) || (5_100..<10_000).contains(t) }
        XCTAssertFalse(events.contains { if case .pairingRequested = $0 { return true } else { return false } }, "\(events)")
        XCTAssertEqual(events.count, 4)
    }

    func testBounceDuringHoldDoesNotRestartTheHold() {
        var monitor = InputMonitor(debounceMillis: 30, pairingHoldMillis: 5000)
        // A 20 ms contact bounce at 3000 ms is below the debounce window.
        let events = runButton(&monitor, from: 0, to: 7_000) { t in t >= 1_000 && !(3_000..<3_020).contains(t) }
        XCTAssertEqual(events, [.changed(.pairingButton, active: true, atMillis: 1_030), .pairingRequested(atMillis: 6_000)])
    }

    func testButtonHeldAtStartUpIsIgnoredUntilReleased() {
        var monitor = InputMonitor(debounceMillis: 30, pairingHoldMillis: 5000)
        let stuck = runButton(&monitor, from: 0, to: 20_000) { _ in true }
        XCTAssertEqual(stuck, [], "a shorted button must not open pairing on boot")
        let afterRelease = runButton(&monitor, from: 20_010, to: 27_000) { t in t >= 21_000 }
        XCTAssertEqual(afterRelease.last, .pairingRequested(atMillis: 26_000))
    }

    func testMonitorSamplesSimulatedLines() throws {
        let rig = try GPIOFixtures.makeRig()
        var monitor = InputMonitor(board: rig.board)
        XCTAssertEqual(try monitor.sample(rig.lines, clock: rig.clock), [])
        // Pull-ups on active-low inputs: nothing connected reads inactive (door closed).
        XCTAssertEqual(monitor.states, [.doorOpen: false, .trunkOpen: false, .lockState: false, .pairingButton: false, .doorHandle: false])
        rig.chip.setInput(try XCTUnwrap(rig.board.inputs[.doorOpen]), active: true)
        var events: [InputEvent] = []
        for _ in 0..<5 {
            rig.clock.advance(by: 10)
            events += try monitor.sample(rig.lines, clock: rig.clock)
        }
        XCTAssertEqual(events, [.changed(.doorOpen, active: true, atMillis: 1_040)])
        XCTAssertFalse(rig.chip.physicalLevel(try XCTUnwrap(rig.board.inputs[.doorOpen])), "active-low: open door pulls the line low")
    }
}

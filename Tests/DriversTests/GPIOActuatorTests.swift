// Pulse timing on virtual time, the lock/unlock interlock, and the lock-state read-back.
import Dispatch
import XCTest
import Synchronization
@testable import Drivers

final class GPIOActuatorTests: XCTestCase {
    func testOutputsAreRequestedInactiveBeforeAnything() throws {
        let rig = try GPIOFixtures.makeRig()
        let requests = rig.chip.changes
        XCTAssertEqual(Set(requests.map(\.role)), Set(OutputRole.allCases.map(\.rawValue)))
        XCTAssertTrue(requests.allSatisfy { $0.initial && !$0.active && !$0.physicalHigh }, "\(requests)")
    }

    func testActiveLowOutputIsRequestedHigh() throws {
        var board = try GPIOFixtures.simulatedBoard()
        board.outputs[.lock]?.activeLow = true
        let chip = SimulatedGPIO(clock: ManualClock())
        _ = try BoardLines(board: board, backend: chip)
        let lock = try XCTUnwrap(chip.changes(role: "lock").first)
        XCTAssertFalse(lock.active)
        XCTAssertTrue(lock.physicalHigh, "inactive on an active-low line is the high level")
    }

    func testPulseHoldsTheLineActiveForExactlyThePulseWidth() throws {
        let rig = try GPIOFixtures.makeRig(pulseWidth: 250, settle: 40)
        let result = try rig.actuators.pulse(.unlock)

        let moves = rig.chip.changes(role: "unlock").filter { !$0.initial }
        XCTAssertEqual(moves.map(\.active), [true, false])
        XCTAssertEqual(moves.map(\.atMillis), [1_000, 1_250])
        XCTAssertEqual(result.activatedAtMillis, 1_000)
        XCTAssertEqual(result.deactivatedAtMillis, 1_250)
        XCTAssertEqual(result.activeMillis, 250)
        XCTAssertEqual(result.line, GPIOLineReference(role: "unlock", chip: "sim-gpio", line: 27))
        // The pulse sleep, then the feedback settle sleep, nothing else.
        XCTAssertEqual(rig.clock.sleeps, [250, 40])
        // No other output moved.
        XCTAssertEqual(rig.chip.changes.filter { !$0.initial && $0.role != "unlock" }, [])
    }

    func testTrunkReleaseHasNoFeedbackCheck() throws {
        let rig = try GPIOFixtures.makeRig(pulseWidth: 500)
        let result = try rig.actuators.pulse(.trunkRelease)
        XCTAssertEqual(result.feedback, .notChecked)
        XCTAssertEqual(result.activeMillis, 500)
        XCTAssertEqual(rig.clock.sleeps, [500], "no settle wait without a lock state to read")
    }

    func testFeedbackConfirmsLockAndUnlock() throws {
        let rig = try GPIOFixtures.makeRig()
        XCTAssertEqual(try rig.actuators.pulse(.lock).feedback, .confirmed(locked: true))
        XCTAssertEqual(try rig.actuators.pulse(.unlock).feedback, .confirmed(locked: false))
        XCTAssertFalse(try rig.actuators.pulse(.lock).isFault)
    }

    func testBrokenFeedbackIsAFaultResultButThePulseHappened() throws {
        let rig = try GPIOFixtures.makeRig()
        XCTAssertEqual(try rig.actuators.pulse(.unlock).feedback, .confirmed(locked: false))
        rig.chip.setFeedbackBroken(true)
        let result = try rig.actuators.pulse(.lock)
        XCTAssertEqual(result.feedback, .mismatch(expectedLocked: true, observedLocked: false))
        XCTAssertTrue(result.isFault)
        XCTAssertEqual(result.activeMillis, 300, "the line still moved; the fault is the car not following")
    }

    func testUnwiredFeedbackWithoutLockStateIsNotChecked() throws {
        var board = try GPIOFixtures.simulatedBoard()
        board.inputs[.lockState] = nil
        let clock = ManualClock()
        let lines = try BoardLines(board: board, backend: SimulatedGPIO(clock: clock))
        let result = try LockActuators(lines: lines, clock: clock).pulse(.lock)
        XCTAssertEqual(result.feedback, .notChecked)
        XCTAssertFalse(result.isFault)
    }

    func testPulseWidthBoundsAreEnforcedEvenForHandBuiltBoards() throws {
        for (width, ok) in [(9 as UInt64, false), (10, true), (1000, true), (1001, false), (5000, false)] {
            var board = try GPIOFixtures.simulatedBoard()
            board.pulseWidthMillis = width
            let clock = ManualClock()
            let lines = try BoardLines(board: board, backend: SimulatedGPIO(clock: clock))
            if ok {
                XCTAssertNoThrow(try LockActuators(lines: lines, clock: clock), "\(width)")
            } else {
                XCTAssertThrowsError(try LockActuators(lines: lines, clock: clock)) {
                    XCTAssertEqual($0 as? ActuationError, .invalidPulseWidth(width))
                }
            }
        }
    }

    func testSequentialLockAndUnlockNeverOverlap() throws {
        let rig = try GPIOFixtures.makeRig()
        for actuation in [Actuation.lock, .unlock, .lock, .trunkRelease, .unlock] {
            _ = try rig.actuators.pulse(actuation)
        }
        XCTAssertEqual(Self.maxSimultaneouslyActive(rig.chip.changes), 1)
    }

    /// A request arriving while a pulse is active is refused, and the active line is untouched.
    func testRequestDuringAPulseIsRefused() throws {
        let clock = InterposingClock()
        var board = try GPIOFixtures.simulatedBoard()
        board.feedbackSettleMillis = 0
        let chip = SimulatedGPIO(clock: clock)
        chip.wireFeedback(board: board)
        let actuators = try LockActuators(lines: BoardLines(board: board, backend: chip), clock: clock)
        let refusals = LockedBox<[ActuationError]>([])
        // The clock runs this in the middle of the lock pulse, while the lock line is active.
        clock.duringSleep = {
            XCTAssertEqual(actuators.inProgress, .lock)
            for other in [Actuation.unlock, .lock, .trunkRelease] {
                do throws(ActuationError) {
                    _ = try actuators.pulse(other)
                    XCTFail("\(other) ran during a lock pulse")
                } catch {
                    refusals.update { $0.append(error) }
                }
            }
        }
        let result = try actuators.pulse(.lock)
        clock.duringSleep = nil

        XCTAssertEqual(refusals.value, Array(repeating: .busy(inProgress: .lock), count: 3))
        XCTAssertEqual(result.feedback, .confirmed(locked: true))
        XCTAssertEqual(chip.changes.filter { !$0.initial }.map(\.role), ["lock", "lock"])
        XCTAssertNil(actuators.inProgress)
        // After the pulse the interlock is free again.
        XCTAssertEqual(try actuators.pulse(.unlock).feedback, .confirmed(locked: false))
    }

    /// Real threads racing lock and unlock (on virtual time, so no real sleeps): never both
    /// active, and every call either ran completely or was refused.
    func testConcurrentRequestsNeverMakeLockAndUnlockActiveTogether() throws {
        let clock = ManualClock()
        var board = try GPIOFixtures.simulatedBoard()
        board.pulseWidthMillis = 10
        board.feedbackSettleMillis = 0
        let chip = SimulatedGPIO(clock: clock)
        let actuators = try LockActuators(lines: BoardLines(board: board, backend: chip), clock: clock)
        let outcomes = LockedBox<(ran: Int, refused: Int)>((0, 0))
        DispatchQueue.concurrentPerform(iterations: 8) { index in
            for _ in 0..<50 {
                do {
                    _ = try actuators.pulse(index.isMultiple(of: 2) ? .lock : .unlock)
                    outcomes.update { $0.ran += 1 }
                } catch ActuationError.busy {
                    outcomes.update { $0.refused += 1 }
                } catch {
                    XCTFail("\(error)")
                }
            }
        }
        let (ran, refused) = outcomes.value
        XCTAssertEqual(ran + refused, 400)
        XCTAssertGreaterThan(ran, 0)
        XCTAssertEqual(chip.changes.filter { !$0.initial }.count, ran * 2)
        XCTAssertEqual(Self.maxSimultaneouslyActive(chip.changes), 1)
    }

    func testFailureToDeactivateLatchesAllActuation() throws {
        let board = try GPIOFixtures.simulatedBoard()
        let clock = ManualClock()
        let faulty = FaultyBackend(SimulatedGPIO(clock: clock))
        let actuators = try LockActuators(lines: BoardLines(board: board, backend: faulty), clock: clock)
        faulty.failures.update { $0 = [.deactivate] }
        XCTAssertThrowsError(try actuators.pulse(.lock)) {
            guard case .stuckActive? = $0 as? ActuationError else { return XCTFail("\($0)") }
        }
        XCTAssertNotNil(actuators.latchedReason)
        // Even with the fault gone, nothing moves again: the lock line may still be energised.
        faulty.failures.update { $0 = [] }
        for actuation in Actuation.allCases {
            XCTAssertThrowsError(try actuators.pulse(actuation)) {
                guard case .latched? = $0 as? ActuationError else { return XCTFail("\($0)") }
            }
        }
        // The activation, the failed deactivation and its one retry; nothing after the latch.
        let moves = faulty.chip.changes.filter { !$0.initial }
        XCTAssertEqual(moves.map(\.role), ["lock", "lock", "lock"])
        XCTAssertEqual(moves.map(\.active), [true, false, false])
    }

    func testFailureToActivateDrivesInactiveAndDoesNotLatch() throws {
        let board = try GPIOFixtures.simulatedBoard()
        let clock = ManualClock()
        let faulty = FaultyBackend(SimulatedGPIO(clock: clock))
        let actuators = try LockActuators(lines: BoardLines(board: board, backend: faulty), clock: clock)
        faulty.failures.update { $0 = [.activate] }
        XCTAssertThrowsError(try actuators.pulse(.unlock)) {
            guard case .gpio(.ioFailed)? = $0 as? ActuationError else { return XCTFail("\($0)") }
        }
        XCTAssertEqual(faulty.chip.changes(role: "unlock").last?.active, false)
        XCTAssertNil(actuators.latchedReason)
        XCTAssertEqual(clock.sleeps, [], "no pulse time was spent on a failed activation")
        faulty.failures.update { $0 = [] }
        XCTAssertEqual(try actuators.pulse(.unlock).activeMillis, 300)
    }

    /// Replays the change log and returns the most outputs that were active at once.
    static func maxSimultaneouslyActive(_ changes: [SimulatedGPIO.LevelChange]) -> Int {
        var active = Set<String>()
        var most = 0
        for change in changes {
            if change.active { active.insert(change.role) } else { active.remove(change.role) }
            most = max(most, active.count)
        }
        return most
    }
}

/// A virtual clock that runs a hook inside `sleep`, i.e. while a pulse holds its line active.
/// The hook is kept in a final class, not as a closure in the Mutex: a closure read back out of
/// a generic container gains a re-abstraction thunk on every read (see EventRouter.swift).
final class InterposingClock: MonotonicClock {
    private final class Hook: Sendable {
        let run: @Sendable () -> Void
        init(_ run: @escaping @Sendable () -> Void) { self.run = run }
    }

    private let base = ManualClock()
    private let hook = Mutex<Hook?>(nil)

    /// Set to run once inside the next `sleep`; nil clears it.
    var duringSleep: (@Sendable () -> Void)? {
        get { nil }
        set { hook.withLock { $0 = newValue.map(Hook.init) } }
    }

    func nowMillis() -> UInt64 { base.nowMillis() }

    func sleep(millis: UInt64) {
        // Cleared before running so a nested pulse (which would be a bug) cannot recurse.
        let action = hook.withLock { hook in
            let action = hook
            hook = nil
            return action
        }
        action?.run()
        base.sleep(millis: millis)
    }
}

/// Wraps the simulated chip and makes output sets fail on demand.
final class FaultyBackend: GPIOBackend {
    enum Failure: Sendable { case activate, deactivate }

    let chip: SimulatedGPIO
    let failures = LockedBox<Set<Failure>>([])

    init(_ chip: SimulatedGPIO) { self.chip = chip }

    func requestOutput(_ config: GPIOLineConfig, role: String) throws(GPIOError) -> any GPIOOutputLine {
        FaultyOutput(inner: try chip.requestOutput(config, role: role), failures: failures)
    }

    func requestInput(_ config: GPIOLineConfig, role: String) throws(GPIOError) -> any GPIOInputLine {
        try chip.requestInput(config, role: role)
    }
}

final class FaultyOutput: GPIOOutputLine {
    let inner: any GPIOOutputLine
    let failures: LockedBox<Set<FaultyBackend.Failure>>

    init(inner: any GPIOOutputLine, failures: LockedBox<Set<FaultyBackend.Failure>>) {
        self.inner = inner
        self.failures = failures
    }

    var reference: GPIOLineReference { inner.reference }

    func setActive(_ active: Bool) throws(GPIOError) {
        // An activation that fails still reaches the pin here, the worst case for the caller.
        try inner.setActive(active)
        if failures.value.contains(active ? .activate : .deactivate) {
            throw .ioFailed(reference, operation: "set value", errno: Errno(5, "injected"))
        }
    }

    func isActive() throws(GPIOError) -> Bool { try inner.isActive() }
    func release() { inner.release() }
}

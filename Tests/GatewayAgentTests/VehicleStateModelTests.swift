// The vehicle state from inputs and pulses, with and without a lock-state switch.
import XCTest
import Drivers
import Protocol
@testable import carkey_agent

final class VehicleStateModelTests: XCTestCase {
    func testWithLockFeedbackTheSwitchIsTheTruth() {
        var model = VehicleStateModel(inputs: [.lockState: false, .doorOpen: false, .trunkOpen: false], hasLockFeedback: true)
        XCTAssertEqual(model.state, [.trunkLocked])
        model.actuationEnded(.lock, feedback: .mismatch(expectedLocked: true, observedLocked: false))
        XCTAssertEqual(model.state, [.trunkLocked], "a jammed lock stays unlocked")
        model.actuationEnded(.lock, feedback: .confirmed(locked: true))
        XCTAssertEqual(model.state, [.locked, .trunkLocked])
        model.inputChanged(.lockState, active: false)
        XCTAssertFalse(model.locked, "unlocked by hand")
        model.actuationEnded(.lock, feedback: .unreadable(.released(GPIOLineReference(role: "lockState", chip: "c", line: 1))))
        XCTAssertFalse(model.locked, "an unreadable switch changes nothing")
    }

    func testWithoutLockFeedbackThePulseIsAssumedToWork() {
        var model = VehicleStateModel(inputs: [.doorOpen: true, .trunkOpen: true], hasLockFeedback: false)
        XCTAssertEqual(model.state, [.locked, .anyDoorOpen, .trunkOpen], "assumed locked at start-up")
        XCTAssertEqual(model.lockSource, "last actuation (no lock-state input)")
        model.actuationEnded(.unlock, feedback: .notChecked)
        XCTAssertFalse(model.locked)
        model.actuationEnded(.trunkRelease, feedback: .notChecked)
        XCTAssertFalse(model.locked, "the trunk does not touch the locks")
        model.inputChanged(.lockState, active: true)
        XCTAssertFalse(model.locked, "a lock-state input the board does not have is ignored")
        model.inputChanged(.trunkOpen, active: false)
        model.inputChanged(.doorOpen, active: false)
        XCTAssertEqual(model.state, [.trunkLocked])
    }
}

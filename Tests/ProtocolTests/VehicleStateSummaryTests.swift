// The vehicle state in words: both locks always stated, so "unlocked" is said, not implied by
// a missing "locked" (the flag list of `description`, kept for logs).
import XCTest
import Protocol

final class VehicleStateSummaryTests: XCTestCase {
    func testEveryLockIsStatedEitherWay() {
        let cases: [(VehicleState, String)] = [
            ([.trunkLocked], "unlocked, trunk locked"),
            ([], "unlocked, trunk unlocked"),
            ([.locked, .trunkLocked], "locked, trunk locked"),
            ([.locked, .anyDoorOpen, .trunkLocked], "locked, a door open, trunk locked"),
            ([.driverDoorOpen, .anyDoorOpen, .trunkOpen], "unlocked, driver door open, trunk open"),
            (VehicleState(rawValue: 0x0101), "locked, trunk unlocked, reserved bits 0x100"),
        ]
        for (state, words) in cases {
            XCTAssertEqual(state.summary, words, state.description)
        }
        XCTAssertEqual(VehicleState.trunkLocked.description, "trunkLocked", "the flag list is unchanged")
    }
}

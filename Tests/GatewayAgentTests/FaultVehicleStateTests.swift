// A Response that refuses a command before the car has actuated anything must still tell the
// phone the car's real state: a locked car reported as unlocked (state 0) would make an app
// show "unlocked" and an owner walk away from an open car, or trust a lock that never happened.
import XCTest
@testable import carkey_agent
import Drivers
import Protocol

final class FaultVehicleStateTests: XCTestCase {
    func testARefusalBeforeAnyActuationReportsTheLockedCarAsLocked() throws {
        let guest = try P256PrivateKey.generate()
        // Lock-only share: unlock is refused with insufficientPermission, nothing moves.
        let car = try InProcessCar(keys: [KeyRecord(publicKey: guest.publicKey, role: .shared, permissions: [.lock])],
                                   memoryLinks: true)
        XCTAssertTrue(car.actuator.state.contains(.locked), "the simulated car starts locked")
        let phone = try MemoryPhone(server: try XCTUnwrap(car.memory), key: guest, car: car.identity.publicKey, vehicle: car.vehicle)
        try phone.sendHello()
        try car.pump("session established") {
            _ = try phone.drain()
            return phone.isEstablished
        }
        try phone.sendCommand(.unlock)
        var response: ResponseBody?
        try car.pump("unlock refused") {
            for case .response(let body) in try phone.drain() { response = body }
            return response != nil
        }
        let body = try XCTUnwrap(response)
        XCTAssertEqual(body.fault, .insufficientPermission)
        XCTAssertEqual(car.moves("unlock"), 0, "nothing moved")
        XCTAssertEqual(body.vehicleState, car.actuator.state, "the refusal carries the car's real state")
        XCTAssertTrue(body.vehicleState.contains(.locked), "a locked car is never reported unlocked")
    }
}

// The shipped Raspberry Pi board files, run by the agent (GPIO on the simulated chip): the file
// for a car without a UWB module lets an owner unlock, and the file with the module makes unlock
// wait for the phone's distance. The UWB file on a machine without the module is exactly the
// Pi that was set up with the wrong file: every unlock is notInProximity, lock still works.
import XCTest
import Drivers
#if canImport(Glibc)
import Glibc
#endif

final class PiBoardFileAgentTests: XCTestCase {
    private static func boardFile(_ name: String) -> String { Subprocess.repositoryRoot + "/board/\(name).json" }

    private func start(board: String, _ extra: [String] = []) throws -> AgentHarness {
        let car = AgentHarness()
        try car.start(clockSync: "yes", ["--board", Self.boardFile(board), "--console", "none"] + extra)
        return car
    }

    private func proximityRows(_ car: AgentHarness) throws -> [StoredEvent] {
        try car.events().filter { $0.event.kind.rawValue == "proximity" }
    }

    func testWithoutTheModuleTheNoUWBFileUnlocks() throws {
        for pi in ["raspberrypi4", "raspberrypi5"] {
            let car = try start(board: pi + "-no-uwb")
            let agent = try XCTUnwrap(car.agent)
            XCTAssertTrue(agent.stderr.contains("board \(pi)-no-uwb"), agent.stderr)
            XCTAssertFalse(agent.stdout.contains("uwb:") || agent.stderr.contains("uwb:"), "no module configured: \(agent.stdout)\(agent.stderr)")
            let owner = try car.enrollOwner()
            let unlock = try car.phone("unlock", key: owner.path)
            XCTAssertEqual(unlock.firstLine, "ok", "\(pi): \(unlock.stdout)\(unlock.stderr)")
            XCTAssertEqual(try car.phone("trunk", key: owner.path).firstLine, "ok", pi)
            XCTAssertEqual(try proximityRows(car).count, 0, "\(pi): no distance was asked for")
            XCTAssertEqual(car.stop(), 0)
        }
    }

    func testTheUWBFileWithoutAModuleRefusesEveryUnlockAndStillLocks() throws {
        guard access("/dev/spidev0.0", F_OK) != 0 else {
            throw XCTSkip("/dev/spidev0.0 exists here: this test needs a machine without the module's SPI node")
        }
        let car = try start(board: "raspberrypi5-uwb")
        let owner = try car.enrollOwner()
        XCTAssertEqual(try car.phone("unlock", key: owner.path).firstLine, "fault: notInProximity (32)")
        XCTAssertEqual(try car.phone("unlock", key: owner.path, extra: ["--uwb"]).firstLine, "fault: notInProximity (32)")
        XCTAssertEqual(try car.phone("lock", key: owner.path).firstLine, "ok", "lock never needs the distance")
        let agent = try XCTUnwrap(car.agent)
        XCTAssertTrue(agent.stderr.contains("carkey-agent: uwb: not available on /dev/spidev0.0"), "the start-up names the missing node: \(agent.stderr)")
        XCTAssertEqual(try proximityRows(car).filter { $0.event.result == "refused" }.map(\.event.action), ["unlock", "unlock"])
    }

    func testTheUWBFileWithAModuleUnlocksOnlyInTheUnlockZone() throws {
        // --simulate-uwb: the module the board file describes, simulated at register level.
        let car = try start(board: "raspberrypi5-uwb", ["--simulate-uwb"])
        let owner = try car.enrollOwner()
        XCTAssertEqual(try car.phone("unlock", key: owner.path).firstLine, "fault: notInProximity (32)", "no ranging")
        let place = try car.agentTool(["sim", "--state-dir", car.stateDir, "uwb", "place", "1.0"])
        XCTAssertEqual(place.status, 0, place.stdout + place.stderr)
        let near = try car.phone("unlock", key: owner.path, extra: ["--uwb"])
        XCTAssertEqual(near.firstLine, "ok", near.stdout + near.stderr)
        XCTAssertEqual(try proximityRows(car).map(\.event.result), ["refused", "allowed"])
    }
}

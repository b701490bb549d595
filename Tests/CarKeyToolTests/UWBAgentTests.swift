// The agent with a UWB module (--simulate-uwb: register-level DW3000s on a simulated air, the
// phone's radio simulated too) end to end: unlock and trunk need the Unlock zone, lock does
// not; a relay and a distance-reduction attack are refused; passive entry and walk-away lock;
// every decision is in the event log with its evidence.
import XCTest
import Drivers
import Protocol

final class UWBAgentTests: XCTestCase {
    private func startCar(config: String? = nil, console: Bool = false) throws -> AgentHarness {
        let car = AgentHarness()
        var extra = ["--simulate-uwb"] + (console ? [] : ["--console", "none"])
        if let config {
            let path = car.folder + "/agent.json"
            try Files.writeAtomically(Array(config.utf8), to: path)
            extra += ["--config", path]
        }
        try car.start(clockSync: "yes", extra)
        return car
    }

    private func sim(_ car: AgentHarness, _ words: String) throws {
        let result = try car.agentTool(["sim", "--state-dir", car.stateDir] + words.split(separator: " ").map(String.init))
        XCTAssertEqual(result.status, 0, result.stdout + result.stderr)
    }

    private func agentLog(_ car: AgentHarness) -> String { (car.agent?.stdout ?? "") + (car.agent?.stderr ?? "") }

    private func proximityRows(_ car: AgentHarness) throws -> [StoredEvent] {
        try car.events().filter { $0.event.kind.rawValue == "proximity" }
    }

    func testUnlockNeedsTheUnlockZoneAndLockDoesNot() throws {
        let car = try startCar()
        XCTAssertTrue(agentLog(car).contains("uwb: simulated DW3110"), agentLog(car))
        let owner = try car.enrollOwner()

        // No ranging at all: refused by name; lock works anywhere in radio range.
        XCTAssertEqual(try car.phone("unlock", key: owner.path).firstLine, "fault: notInProximity (32)")
        XCTAssertEqual(try car.phone("lock", key: owner.path).firstLine, "ok")

        // Ranging from 20 m: still refused (tooFar), and the trunk too.
        try sim(car, "uwb place 20")
        XCTAssertEqual(try car.phone("unlock", key: owner.path, extra: ["--uwb"]).firstLine, "fault: notInProximity (32)")
        XCTAssertEqual(try car.phone("trunk", key: owner.path, extra: ["--uwb"]).firstLine, "fault: notInProximity (32)")

        // At the door: unlock.
        try sim(car, "uwb place 1.0")
        let near = try car.phone("unlock", key: owner.path, extra: ["--uwb"])
        XCTAssertEqual(near.firstLine, "ok", near.stdout + near.stderr)
        XCTAssertTrue(near.stderr.contains("uwb: ranging session"), near.stderr)

        let rows = try proximityRows(car)
        let refused = rows.filter { $0.event.result == "refused" }
        let allowed = rows.filter { $0.event.result == "allowed" }
        XCTAssertEqual(refused.map(\.event.action), ["unlock", "unlock", "trunk"])
        XCTAssertEqual(refused.first?.event.fault?.name, "notInProximity")
        XCTAssertTrue(refused.first?.event.detailJSON?.contains(#""reason":"noRanging""#) ?? false, "\(refused)")
        XCTAssertTrue(refused.last?.event.detailJSON?.contains(#""reason":"tooFar""#) ?? false, "\(refused)")
        let evidence = try XCTUnwrap(allowed.last?.event.detailJSON)
        XCTAssertEqual(allowed.map(\.event.action), ["unlock"])
        for field in [#""zone":"unlock""#, #""distanceCm":"#, #""stsQualityPercent":"#, #""validRounds":"#, #""rounds":"#] {
            XCTAssertTrue(evidence.contains(field), "\(field) in \(evidence)")
        }
        // The distance recorded is the simulated 1 m, within the noise.
        let centimetres = evidence.split(separator: ",").first { $0.hasPrefix(#""distanceCm":"#) }
            .flatMap { Int($0.split(separator: ":")[1]) }
        XCTAssertNotNil(centimetres)
        if let centimetres { XCTAssertTrue((60...140).contains(centimetres), "distance \(centimetres) cm") }
    }

    /// A module on channel 5 with preamble code 11 and 128 STS symbols: none of the preferred
    /// values. The phone asks for the capabilities first (0x08) and proposes what the car takes.
    func testThePhoneProposesWhatTheCarsModuleAccepts() throws {
        let car = AgentHarness()
        let simulated = String(decoding: try Files.read(#filePath.components(separatedBy: "/Tests/")[0] + "/board/simulated.json"), as: UTF8.self)
        let board = simulated.trimmingCharacters(in: .whitespacesAndNewlines).dropLast()
            + #", "uwb": {"spidev": "/dev/spidev0.0", "channel": 5, "preambleCode": 11, "stsLength": 128}}"#
        let path = car.folder + "/board-ch5.json"
        try Files.writeAtomically(Array(board.utf8), to: path)
        try car.start(clockSync: "yes", ["--simulate-uwb", "--console", "none", "--board", path])
        let owner = try car.enrollOwner()
        let result = try car.phone("unlock", key: owner.path, extra: ["--uwb"])
        try sim(car, "uwb place 1.0")
        let near = try car.phone("unlock", key: owner.path, extra: ["--uwb"])
        XCTAssertEqual(near.firstLine, "ok", near.stdout + near.stderr)
        XCTAssertTrue(near.stderr.contains("uwb: the car accepts channels 5, preamble codes 11, STS 128"), near.stderr)
        XCTAssertNotEqual(result.firstLine, "fault: rangingUnsupported (34)", "20 m away: refused for the distance, not the setup")
    }

    func testARelayAndADistanceReductionAttackAreRefused() throws {
        let car = try startCar()
        let owner = try car.enrollOwner()
        // The phone is 100 m away, out of radio range; attackers relay its frames (the path is
        // 104 m): the car does range, and measures the relay's path.
        try sim(car, "uwb place 100")
        try sim(car, "uwb relay on 104")
        XCTAssertEqual(try car.phone("unlock", key: owner.path, extra: ["--uwb"]).firstLine, "fault: notInProximity (32)")
        let relayed = try XCTUnwrap(try proximityRows(car).last?.event.detailJSON)
        XCTAssertTrue(relayed.contains(#""reason":"tooFar""#), relayed)
        let centimetres = relayed.split(separator: ",").first { $0.hasPrefix(#""distanceCm":"#) }.flatMap { Int($0.split(separator: ":")[1]) }
        XCTAssertGreaterThan(centimetres ?? 0, 10_000, "a relay can only lengthen the range: \(relayed)")
        try sim(car, "uwb relay off")
        // Ghost peak: half the frames read 8 m early (9 m would look like 1 m). With STS the
        // forged first path does not correlate: those rounds are invalid, never a range.
        try sim(car, "uwb place 9")
        try sim(car, "uwb reduce on 0.5 8")
        XCTAssertEqual(try car.phone("unlock", key: owner.path, extra: ["--uwb", "--uwb-wait", "800"]).firstLine,
                       "fault: notInProximity (32)")
        XCTAssertEqual(try car.events().filter { $0.event.action == "unlock" && $0.event.kind == .accessDecision
            && $0.event.result == "ok" }.count, 0, "no unlock went through")
        XCTAssertFalse(agentLog(car).contains("unlock pulsed"), agentLog(car))
    }

    func testPassiveEntryAndWalkAwayLock() throws {
        let car = try startCar(config: #"{"proximity": {"walkAwaySeconds": 2}}"#)
        let owner = try car.enrollOwner()
        try sim(car, "uwb place 1.0")
        // The phone stays in its session (ranging) for 4 s; meanwhile the handle is pulled.
        let visit = try BackgroundProcess("carkey", ["phone", "--key", owner.path, "--connect", "unix:" + car.socketPath,
                                                     "--uwb", "--uwb-wait", "4000", "--timeout", "10", "status"])
        XCTAssertTrue(visit.wait(timeoutSeconds: 5) { visit.stderr.contains("uwb: ranging session") }, visit.stderr)
        usleep(500_000)
        try sim(car, "handle pull")
        XCTAssertTrue(car.agent?.wait(timeoutSeconds: 5) { self.agentLog(car).contains("passive entry: unlock pulsed") } ?? false,
                      agentLog(car))
        try sim(car, "handle release")
        // The owner walks away with the car unlocked and the doors closed: it locks itself.
        try sim(car, "uwb walk 1 20 4")
        XCTAssertTrue(car.agent?.wait(timeoutSeconds: 15) { self.agentLog(car).contains("walk-away lock: lock pulsed") } ?? false,
                      agentLog(car))
        _ = visit.stop()
        let rows = try proximityRows(car)
        XCTAssertEqual(rows.filter { $0.event.action == "passiveEntry" }.map(\.event.result), ["allowed"])
        XCTAssertEqual(rows.filter { $0.event.action == "walkAwayLock" }.map(\.event.result), ["locked"])
    }

    func testPassiveEntryWithoutAKeyNearbyDoesNothing() throws {
        let car = try startCar()
        _ = try car.enrollOwner()
        try sim(car, "handle pull")
        XCTAssertTrue(car.agent?.wait(timeoutSeconds: 5) { self.agentLog(car).contains("passive entry refused") } ?? false,
                      agentLog(car))
        XCTAssertFalse(agentLog(car).contains("unlock pulsed"))
        XCTAssertEqual(try proximityRows(car).map(\.event.result), ["refused"])
    }

    func testTheConsoleShowsTheModuleTheRangesAndTheNearestKey() throws {
        let car = try startCar(console: true)
        let owner = try car.enrollOwner()
        let prefix = "carkey-agent: console on "
        let line = try XCTUnwrap(car.agent?.stderr.split(separator: "\n").first { $0.hasPrefix(prefix) })
        let console = try ConsoleClient(path: String(line.dropFirst(prefix.count)))
        try console.sync()
        XCTAssertTrue(try console.command("status").contains("proximity: UWB up, no key ranging"))
        try sim(car, "uwb place 1.2")
        // Asked while the phone is still in its session and ranging (4 s).
        let visit = try BackgroundProcess("carkey", ["phone", "--key", owner.path, "--connect", "unix:" + car.socketPath,
                                                     "--uwb", "--uwb-wait", "4000", "--timeout", "10", "status"])
        defer { _ = visit.stop() }
        XCTAssertTrue(visit.wait(timeoutSeconds: 5) { visit.stderr.contains("uwb: ranging session") }, visit.stderr)
        usleep(500_000)
        let uwb = try console.command("uwb")
        XCTAssertTrue(uwb.contains("uwb: simulated DW3110"), uwb)
        XCTAssertTrue(uwb.contains("last rounds:"), uwb)
        XCTAssertTrue(uwb.contains("STS quality"), uwb)
        let status = try console.command("status")
        XCTAssertTrue(status.contains("nearest key"), status)
        XCTAssertTrue(status.contains("zone unlock") || status.contains("zone immediate"), status)
    }
}

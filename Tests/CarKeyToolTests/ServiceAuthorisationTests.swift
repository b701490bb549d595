// Service mode as an attacker and an engineer meet it on the real console (a pty, as picocom
// would open it): the PIN's guess count survives restarts and power cuts, and the signed
// challenge (`service challenge`, `carkey service sign`, `service auth`) is refused when its
// answer is expired, for another vehicle, replayed or signed by a revoked key.
import XCTest
import Drivers
import Protocol
#if canImport(Glibc)
import Glibc
#endif

final class ServiceAuthorisationTests: XCTestCase {
    static let pin = "246810"

    private var harness: AgentHarness!
    private var config = ""

    override func setUpWithError() throws {
        harness = AgentHarness()
        config = harness.folder + "/agent.json"
    }

    override func tearDown() {
        harness = nil
    }

    private func writeConfig(_ service: String, fleetKey: String? = nil) throws {
        let remote = fleetKey.map { #", "remote": {"fleetKeys": ["\#($0)"]}"# } ?? ""
        try Subprocess.write(#"{"service": \#(service), "console": {"tty": "pty"}\#(remote)}"#, to: config)
        chmod(config, 0o600)
    }

    /// Starts the agent and opens its console.
    private func start() throws -> ConsoleClient {
        let agent = try harness.start(clockSync: "yes", ["--config", config])
        let prefix = "carkey-agent: console on "
        let line = agent.stderr.split(separator: "\n").first { $0.hasPrefix(prefix) }
        let console = try ConsoleClient(path: String(try XCTUnwrap(line, agent.stderr).dropFirst(prefix.count)))
        try console.sync()
        return console
    }

    /// A power cut: SIGKILL, nothing flushed or closed by the agent.
    private func cutPower() {
        _ = harness.agent?.stop(signal: SIGKILL)
        harness.stop()
    }

    private func serviceEvents() throws -> [[String]] {
        try harness.events().filter { $0.event.kind.rawValue == "service" }
            .map { [$0.event.action, $0.event.result, $0.event.fault?.name ?? "-"] }
    }

    /// The challenge's hex line from `service challenge`.
    private func challenge(_ console: ConsoleClient) throws -> String {
        let answer = try console.command("service challenge")
        let line = answer.split(whereSeparator: \.isNewline).first { $0.hasPrefix("48") && $0.allSatisfy(\.isHexDigit) }
        return String(try XCTUnwrap(line, answer))
    }

    private func sign(_ challenge: String, key: String, extra: [String] = []) throws -> ProcessResult {
        try Subprocess.run("carkey", ["service", "sign", "--key", key, "--challenge", challenge] + extra)
    }

    private func signed(_ challenge: String, key: String) throws -> String {
        let result = try sign(challenge, key: key, extra: ["--vehicle", AgentHarness.vehicle])
        XCTAssertEqual(result.status, 0, result.stderr)
        return result.stdout.trimmingCharacters(in: .whitespacesAndNewlines)
    }

    func testWrongPINsStayCountedAcrossRestartsAndPowerCuts() throws {
        try writeConfig(#"{"pin": "\#(Self.pin)", "timeoutSeconds": 60}"#)
        var console = try start()
        XCTAssertTrue(try console.command("service on 000000").contains("error: wrong PIN (2 more attempt(s) before a lockout)"))
        cutPower()  // right after an answer: the count was stored before the comparison
        console = try start()
        XCTAssertTrue(try console.command("service").contains("PIN on, 1 wrong in a row"))
        XCTAssertTrue(try console.command("service on 000001").contains("error: wrong PIN (1 more attempt(s) before a lockout)"))
        XCTAssertTrue(try console.command("service on 000002").contains("error: too many wrong PINs; try again in 30 s"))

        // The restart loop of the report: 5 power cuts in a row, each followed by the right PIN
        // and a wrong one at once. None is compared: the lockout came back with the agent.
        for round in 0..<5 {
            cutPower()
            console = try start()
            let right = try console.command("service on \(Self.pin)")
            XCTAssertTrue(right.contains("error: too many wrong PINs; try again in "), "round \(round): \(right)")
            XCTAssertTrue(try console.command("service on 000003").contains("error: too many wrong PINs"), "round \(round)")
            let seconds = right.split(separator: " ").compactMap { Int($0) }.first ?? 0
            XCTAssertTrue((1...30).contains(seconds), "what is left of the 30 s, not a fresh 30 s or none: \(right)")
        }
        XCTAssertTrue(try console.command("service").contains("PIN on, 3 wrong in a row, locked out for "))
        XCTAssertTrue(try console.command("actuate unlock").contains("error: actuate needs service mode"))
        harness.stop()
        let events = try serviceEvents()
        XCTAssertEqual(events.filter { $0[2] == "wrongPIN" }.count, 3, "three PINs were compared: \(events)")
        XCTAssertEqual(events.filter { $0[2] == "lockedOut" }.count, 10, "every refusal is an event: \(events)")
        XCTAssertFalse(events.contains { $0[1] == "ok" })
        XCTAssertFalse(harness.agent?.stderr.contains(Self.pin) ?? false)
    }

    func testASignedChallengeAndItsRefusals() throws {
        let fleet = try harness.keygen("fleet")
        try writeConfig(#"{"pin": "\#(Self.pin)", "timeoutSeconds": 60, "challengeSeconds": 5}"#, fleetKey: fleet.publicHex)
        var console = try start()
        let owner = try harness.enrollOwner()
        let ownerID = try harness.keyIDHex(owner.publicHex)

        // Three wrong PINs first: the signed authorisation below clears the PIN's count too.
        for attempt in ["000000", "000001", "000002"] { _ = try console.command("service on \(attempt)") }
        XCTAssertTrue(try console.command("service").contains("locked out for"))

        let first = try challenge(console)
        let answer = try signed(first, key: owner.path)
        let on = try console.command("service auth \(answer)")
        XCTAssertTrue(on.contains("service mode: on for 60 s, signed by owner key \(ownerID)"), on)
        XCTAssertTrue(try console.command("service").contains("PIN on, 0 wrong in a row"), "a correct authorisation resets the count")
        XCTAssertTrue(try console.command("service off").contains("service mode: off"))

        let help = try console.command("help service")
        XCTAssertTrue(help.contains("service challenge") && help.contains("service auth ANSWER"), help)
        let json = try sign(first, key: owner.path, extra: ["--json"])
        XCTAssertEqual(json.status, 0, json.stderr)
        XCTAssertTrue(json.stdout.hasPrefix(#"{"vehicle":"OCK-SIM-0001","nonce":""#), json.stdout)
        XCTAssertTrue(json.stdout.contains(#""signer":"\#(ownerID)","answer":"4901"#), json.stdout)

        // Replayed: the same answer again.
        XCTAssertTrue(try console.command("service auth \(answer)").contains("refused: reusedChallenge"))

        // For another vehicle: the tool refuses it with --vehicle; without, the car does.
        let otherCar = try ServiceChallenge(nonce: Bytes(repeating: 0x5a, count: 16), vehicleID: try VehicleID("OCK-SIM-0002"),
                                            issuedAt: 1_760_000_000, expiresAt: 1_760_000_300).encoded().hexString
        let guarded = try sign(otherCar, key: owner.path, extra: ["--vehicle", AgentHarness.vehicle])
        XCTAssertNotEqual(guarded.status, 0)
        XCTAssertTrue(guarded.stderr.contains("the challenge is from vehicle OCK-SIM-0002, not OCK-SIM-0001"), guarded.stderr)
        let foreign = try sign(otherCar, key: owner.path)
        XCTAssertEqual(foreign.status, 0, foreign.stderr)
        XCTAssertTrue(try console.command("service auth \(foreign.stdout.trimmingCharacters(in: .whitespacesAndNewlines))")
            .contains("refused: wrongVehicle"))

        // Expired: the car's 5 s deadline passes before the answer arrives.
        let slow = try signed(try challenge(console), key: owner.path)
        usleep(5_500_000)
        XCTAssertTrue(try console.command("service auth \(slow)").contains("refused: challengeExpired"))

        // Garbage and a forged signature.
        XCTAssertTrue(try console.command("service auth 49zz").contains("refused: malformedMessage"))
        var forged = try XCTUnwrap(Bytes(hex: try signed(try challenge(console), key: owner.path)))
        forged[forged.count - 1] ^= 1
        XCTAssertTrue(try console.command("service auth \(forged.hexString)").contains("refused: badSignature"))

        // The fleet key authorises, until the owner revokes it.
        XCTAssertTrue(try console.command("service auth \(try signed(try challenge(console), key: fleet.path))")
            .contains("signed by fleet key"))
        _ = try console.command("service off")
        let revocation = harness.folder + "/fleet.rev"
        let revoke = try Subprocess.run("carkey", ["revoke", "--owner", owner.path, "--vehicle", AgentHarness.vehicle,
                                                   "--key", fleet.publicHex, "--out", revocation])
        XCTAssertEqual(revoke.status, 0, revoke.stderr)
        XCTAssertEqual(try harness.phone("revoke", key: owner.path, extra: ["--object", revocation]).status, 0)
        XCTAssertTrue(try console.command("service auth \(try signed(try challenge(console), key: fleet.path))").contains("refused: revoked"))

        // A key the car has never seen.
        let stranger = try harness.keygen("stranger")
        XCTAssertTrue(try console.command("service auth \(try signed(try challenge(console), key: stranger.path))").contains("refused: unknownKey"))
        XCTAssertTrue(try console.command("actuate unlock").contains("error: actuate needs service mode"))

        // The events: every authorisation and refusal, the signer named on success.
        cutPower()
        console = try start()
        XCTAssertTrue(try console.command("service").contains("PIN on, 0 wrong in a row"), "the reset was stored")
        harness.stop()
        let events = try harness.events().filter { $0.event.kind.rawValue == "service" && $0.event.action == "service-on" }
        XCTAssertEqual(events.map { $0.event.fault?.name ?? $0.event.result },
                       ["wrongPIN", "wrongPIN", "wrongPIN", "ok", "reusedChallenge", "wrongVehicle", "challengeExpired",
                        "malformedMessage", "badSignature", "ok", "revoked", "unknownKey"])
        XCTAssertEqual(events.filter { $0.event.result == "ok" }.map { $0.event.actor ?? "-" }.first, ownerID)
    }

    func testThePINCanBeTurnedOffAndMustHaveSixDigits() throws {
        try writeConfig(#"{"pin": "\#(Self.pin)", "pinEnabled": false}"#)
        let console = try start()
        XCTAssertTrue(try console.command("service on \(Self.pin)")
            .contains("error: the service PIN is turned off (service.pinEnabled false); use service challenge"))
        XCTAssertTrue(try console.command("service").contains("PIN turned off"))
        harness.stop()
        XCTAssertEqual(try serviceEvents(), [["service-on", "refused", "pinOff"]])

        // A 4-digit PIN stops the agent at start-up with one line naming the key (exit 2).
        try writeConfig(#"{"pin": "4938"}"#)
        let refused = try harness.agentTool(["run", "--simulate", "--config", config, "--state-dir", harness.stateDir])
        XCTAssertEqual(refused.status, 2)
        XCTAssertTrue(refused.stderr.contains("key 'service.pin': expected a string of 6 to 12 decimal digits"), refused.stderr)
    }
}

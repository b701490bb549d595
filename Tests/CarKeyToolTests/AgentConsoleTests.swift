// The agent with its serial console on a real pseudo-terminal (openpty) and simulated GPIO:
// a test types commands like an engineer with picocom and reads the answers, and drives the
// simulated car's inputs. Phone commands go through `carkey phone`; the lines that moved are
// read back from the simulated chip's record (`gpio`, `gpio history`) and the event log.
import XCTest
import Drivers
import Protocol
#if canImport(Glibc)
import Glibc
#endif

final class AgentConsoleTests: XCTestCase {
    static let pin = "246810"

    private var harness: AgentHarness!
    private var agent: BackgroundProcess!
    private var console: ConsoleClient!

    override func setUpWithError() throws {
        harness = AgentHarness()
        let config = harness.folder + "/agent.json"
        try Subprocess.write(#"{"service": {"pin": "\#(Self.pin)", "timeoutSeconds": 60}, "console": {"tty": "pty"}}"#, to: config)
        chmod(config, 0o600)
        // A synchronised clock, so time-limited shares are accepted (see the share test).
        agent = try harness.start(clockSync: "yes", ["--config", config])
        let prefix = "carkey-agent: console on "
        let line = agent.stderr.split(separator: "\n").first { $0.hasPrefix(prefix) }
        let path = String(try XCTUnwrap(line, agent.stderr).dropFirst(prefix.count))
        XCTAssertTrue(path.hasPrefix("/dev/pts/"), path)
        console = try ConsoleClient(path: path)
        try console.sync() // the first prompt may or may not have survived the open
    }

    override func tearDown() {
        console = nil
        harness = nil
    }

    /// How often each output went active, from `gpio` (the simulated chip's own record).
    private func activations() throws -> [String: Int] {
        var counts: [String: Int] = [:]
        for line in try console.command("gpio").split(whereSeparator: \.isNewline) where line.contains(" out: ") {
            let role = String(line.prefix { $0 != " " })
            let words = line.split(separator: " ")
            if let index = words.firstIndex(of: "active"), index + 1 < words.count, words[index - 1] == "went" {
                counts[role] = Int(words[index + 1])
            }
        }
        return counts
    }

    private static let nothingMoved = ["lock": 0, "unlock": 0, "trunkRelease": 0, "feedbackLight": 0]

    private func events() throws -> [StoredEvent] { try harness.events() }

    func testHelpStatusGPIOAndErrorsOnARealPTY() throws {
        let console: ConsoleClient = console
        let help = try console.command("help")
        for command in ["status", "links", "gpio", "actuate lock|unlock|trunk", "service on PIN", "events [N]", "pair", "config", "log level", "sim door"] {
            XCTAssertTrue(help.contains(command), "help lists \(command): \(help)")
        }
        let status = try console.command("status")
        for line in ["locks: locked (from lock-state input)", "doors: closed", "trunk: closed and latched", "proximity: no UWB module (decisions without distance)",
                     "cloud link: not configured", "phone link: unix:", "outbox queue: ", "store: ", "audit log: ", "clock: trusted", "service mode: off"] {
            XCTAssertTrue(status.contains(line), "status shows \(line): \(status)")
        }
        let links = try console.command("links")
        XCTAssertTrue(links.contains("phone link: unix:") && links.contains("0 of 8 link(s) open"), links)
        let gpio = try console.command("gpio")
        XCTAssertTrue(gpio.contains("unlock out: chip sim-gpio line 27, inactive, went active 0 time(s)"), gpio)
        XCTAssertTrue(gpio.contains("lockState in: chip sim-gpio line 13, active (debounced active)"), gpio)

        XCTAssertTrue(try console.command("blah 1 2").contains("error: unknown command 'blah' (type help)"))
        XCTAssertTrue(try console.command("events x").contains("error: usage: events [N]"))
        XCTAssertTrue(try console.command("a b c d e f g h i").contains("error: malformed input"))
        // Binary garbage: control bytes are dropped, nothing escapes to the terminal, and the
        // console answers the next command normally.
        try console.type([0x00, 0x01, 0x1B, 0x5B, 0x32, 0x4A, 0xFF, 0xFE, 0x07, 0x0D])
        let garbage = console.read(until: "carkey> ")
        XCTAssertFalse(garbage.utf8.contains(0x1B), "no escape byte is echoed or answered")
        XCTAssertTrue(garbage.contains("error: unknown command"), garbage)
        try console.type(String(repeating: "x", count: 5000) + "\r")
        XCTAssertTrue(console.read(until: "discarded").contains("error: line too long (max 384 bytes), discarded"))
        XCTAssertTrue(try console.command("version").contains("carkey-agent 0.1.0"), "still answering after the flood")

        let config = try console.command("config")
        XCTAssertTrue(config.contains("service.pin: set (hidden)"), config)
        XCTAssertFalse(config.contains(Self.pin), "the PIN is never shown")
        XCTAssertTrue(agent.isRunning)
    }

    func testActuateNeedsServiceModeAndMovesTheLine() throws {
        let console: ConsoleClient = console
        XCTAssertTrue(try console.command("actuate unlock").contains("error: actuate needs service mode"))
        XCTAssertEqual(try activations()["unlock"], 0, "a refused service command moves nothing")

        let wrong = try console.command("service on 1111")
        XCTAssertTrue(wrong.contains("error: wrong PIN (2 more attempt(s) before a lockout)"), wrong)
        XCTAssertTrue(wrong.contains("service on ****"), "the PIN echoes as stars: \(wrong)")
        let right = try console.command("service on \(Self.pin)")
        XCTAssertTrue(right.contains("service mode: on for 60 s"), right)
        XCTAssertFalse(right.contains(Self.pin), right)

        XCTAssertTrue(try console.command("actuate unlock").contains("actuate unlock: pulsing"))
        // The pulse (300 ms + 150 ms settle) runs on the worker: the console answers meanwhile,
        // and the interlock refuses a second actuation without moving its line.
        XCTAssertTrue(try console.command("status").contains("actuators: busy (unlock in progress)"))
        XCTAssertTrue(try console.command("actuate lock").contains("error: lock refused: busy, unlock in progress"))
        // The end of the pulse arrives as a notice, followed by a fresh prompt.
        let done = console.read(until: "carkey> ")
        XCTAssertTrue(done.contains("actuate unlock: unlock pulsed on unlock (chip sim-gpio, line 27) for "), done)
        XCTAssertTrue(done.contains(" ms, lock state confirmed unlocked; result ok; state trunkLocked"), done)
        XCTAssertEqual(try activations(), ["lock": 0, "unlock": 1, "trunkRelease": 0, "feedbackLight": 0])
        XCTAssertTrue(try console.command("status").contains("locks: unlocked"))
        XCTAssertTrue(try console.command("service off").contains("service mode: off"))
        XCTAssertTrue(try console.command("actuate lock").contains("error: actuate needs service mode"))

        XCTAssertEqual(harness.stop(), 0)
        let service = try events().filter { $0.event.kind.rawValue == "service" }.map { [$0.event.action, $0.event.result, $0.event.fault?.name ?? "-"] }
        XCTAssertEqual(service, [["service-on", "refused", "wrongPIN"], ["service-on", "ok", "-"], ["lock", "refused", "busy"],
                                 ["unlock", "ok", "-"], ["service-off", "ok", "-"]])
        XCTAssertFalse(agent.stderr.contains(Self.pin), "the PIN is not logged")
    }

    func testWrongPINsLockOut() throws {
        let console: ConsoleClient = console
        _ = try console.command("service on 0000")
        _ = try console.command("service on 0001")
        XCTAssertTrue(try console.command("service on 0002").contains("error: too many wrong PINs; try again in 30 s"))
        XCTAssertTrue(try console.command("service on \(Self.pin)").contains("error: too many wrong PINs"),
                      "during the lockout even the right PIN is refused unchecked")
    }

    func testAllowedUnlockPulsesTheLineAndARefusedOneMovesNone() throws {
        let owner = try harness.enrollOwner()
        let stranger = try harness.keygen("stranger")
        let refused = try harness.phone("unlock", key: stranger.path, pinned: true)
        XCTAssertEqual(refused.firstLine, "fault: unknownKey (1)")
        XCTAssertEqual(try activations(), Self.nothingMoved, "a refused command touches no line")
        XCTAssertTrue(try console.command("gpio history").contains("no output changes since start"))

        let unlock = try harness.phone("unlock", key: owner.path)
        XCTAssertEqual(unlock.status, 0, unlock.stdout + unlock.stderr)
        XCTAssertTrue(unlock.stdout.contains("vehicle state: unlocked, trunk locked"), unlock.stdout)
        let history = try console.command("gpio history")
        XCTAssertTrue(history.contains("unlock (chip sim-gpio line 27) active") && history.contains("unlock (chip sim-gpio line 27) inactive"), history)
        XCTAssertEqual(try activations(), ["lock": 0, "unlock": 1, "trunkRelease": 0, "feedbackLight": 0])
        XCTAssertTrue(agent.stderr.contains("unlock: unlock pulsed on unlock (chip sim-gpio, line 27) for "), agent.stderr)
        XCTAssertTrue(agent.stderr.contains(" ms, lock state confirmed unlocked, result ok"), agent.stderr)

        XCTAssertEqual(harness.stop(), 0)
        let decisions = try events().filter { $0.event.kind == .accessDecision && !["session", "pairing", "enroll"].contains($0.event.action) }
        XCTAssertEqual(decisions.map { [$0.event.action, $0.event.result, $0.event.fault?.name ?? "-"] },
                       [["message", "refused", "unknownKey"], ["unlock", "accepted", "-"], ["unlock", "ok", "-"]])
        XCTAssertEqual(try events().filter { $0.event.kind == .actuatorFault }, [])
    }

    func testAShareRefusedTheTrunkMovesNoLine() throws {
        let owner = try harness.enrollOwner()
        let friend = try harness.keygen("friend")
        let certificate = harness.folder + "/friend.share"
        let share = try Subprocess.run("carkey", ["share", "--owner", owner.path, "--holder", friend.publicHex, "--vehicle", AgentHarness.vehicle,
                                                  "--permissions", "unlock-only", "--not-after", "2099-01-01T00:00:00Z", "--out", certificate])
        XCTAssertEqual(share.status, 0, share.stderr)
        let trunk = try harness.phone("trunk", key: friend.path, pinned: true, extra: ["--share", certificate])
        XCTAssertEqual(trunk.firstLine, "fault: insufficientPermission (5)", trunk.stdout + trunk.stderr)
        XCTAssertEqual(try activations(), Self.nothingMoved, "refused by the engine: the actuator never saw it")
        XCTAssertEqual(try harness.phone("unlock", key: friend.path, pinned: true).firstLine, "ok")
        XCTAssertEqual(try activations(), ["lock": 0, "unlock": 1, "trunkRelease": 0, "feedbackLight": 0])
    }

    func testFeedbackMismatchIsActuationFailedAndAnActuatorFaultEvent() throws {
        let owner = try harness.enrollOwner()
        XCTAssertTrue(try console.command("sim feedback broken").contains("sim: lock-state feedback wire broken"))
        let unlock = try harness.phone("unlock", key: owner.path)
        XCTAssertEqual(unlock.status, 1)
        XCTAssertEqual(unlock.firstLine, "fault: actuationFailed (26)", unlock.stdout)
        XCTAssertTrue(agent.stderr.contains("but the lock state reads locked (expected unlocked): actuator fault"), agent.stderr)
        XCTAssertTrue(try console.command("status").contains("locks: locked"), "the state follows the switch, not the wish")
        XCTAssertEqual(try activations()["unlock"], 1, "the line did move")

        XCTAssertEqual(harness.stop(), 0)
        let all = try events()
        let fault = try XCTUnwrap(all.first { $0.event.kind == .actuatorFault })
        XCTAssertEqual(fault.event.action, "unlock")
        XCTAssertEqual(fault.event.result, "mismatch")
        XCTAssertEqual(fault.event.fault, EventFault(code: 26, name: "actuationFailed"))
        XCTAssertEqual(fault.event.actor, try harness.keyIDHex(owner.publicHex))
        XCTAssertEqual(fault.event.detailJSON,
                       #"{"source":"phone","line":"unlock","chip":"sim-gpio","offset":27,"expected":"unlocked","observed":"locked"}"#)
        let completed = all.filter { $0.event.kind == .accessDecision && $0.event.action == "unlock" }
        XCTAssertEqual(completed.map(\.event.result), ["accepted", "failed"])
        XCTAssertEqual(completed.last?.event.fault?.name, "actuationFailed")
    }

    func testDoorInputIsDebouncedLoggedAndRecorded() throws {
        let owner = try harness.enrollOwner()
        XCTAssertTrue(try console.command("sim door open").contains("sim: door open"))
        XCTAssertTrue(agent.wait(timeoutSeconds: 2) { self.agent.stderr.contains("inputs: doorOpen active") })
        XCTAssertTrue(try console.command("status").contains("doors: open"))
        let status = try harness.phone("status", key: owner.path)
        XCTAssertTrue(status.stdout.contains("vehicle state: locked, a door open, trunk locked"), status.stdout)
        XCTAssertEqual(harness.stop(), 0)
        let rows = try events().filter { $0.event.kind.rawValue == "vehicle-state" }.map { [$0.event.action, $0.event.result] }
        XCTAssertEqual(rows, [["doorOpen", "active"]])
    }

    func testPairOnTheConsoleAndKeys() throws {
        let answer = try console.command("pair")
        let code = try XCTUnwrap(answer.split(whereSeparator: \.isNewline).first { $0.hasPrefix("pairing window open: enter code ") })
            .split(separator: " ")[5]
        XCTAssertEqual(code.count, 6, answer)
        XCTAssertTrue(try console.command("status").contains("pairing window: open"))
        XCTAssertFalse(agent.stderr.contains(String(code)), "the code is shown on the console only")
        let phone = try harness.keygen("phone")
        let enrolled = try harness.enroll(phone.path, code: String(code))
        XCTAssertEqual(enrolled.firstLine, "enrolled", enrolled.stdout + enrolled.stderr)
        XCTAssertTrue(try console.command("keys").contains(String(try harness.keyIDHex(phone.publicHex).prefix(16))))
        let recent = try console.command("events 3")
        XCTAssertTrue(recent.contains("enroll"), recent)
    }

    func testHoldingThePairingButtonOpensTheWindowAndShowsTheCode() throws {
        XCTAssertTrue(try console.command("sim button press").contains("sim: pairing button pressed"))
        // 5 s hold on the simulated board, then the code arrives as a notice.
        let notice = console.read(until: "carkey> ", timeoutSeconds: 10)
        let line = try XCTUnwrap(notice.split(whereSeparator: \.isNewline).first { $0.hasPrefix("pairing button: pairing window open, code ") }, notice)
        let code = String(line.split(separator: " ").last ?? "")
        _ = try console.command("sim button release")
        let phone = try harness.keygen("phone")
        XCTAssertEqual(try harness.enroll(phone.path, code: code).firstLine, "enrolled")
        XCTAssertTrue(agent.stderr.contains("pairing button held for 5 s"), agent.stderr)
    }
}

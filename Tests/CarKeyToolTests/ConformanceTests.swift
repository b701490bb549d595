// Conformance mode end to end: `carkey-agent run --simulate --conformance`, phones as `carkey
// phone` subprocesses, some misbehaving on purpose (`--misbehave MODE`). The agent's stderr
// must name each deviation with its rule, a well-behaved phone must leave a clean checklist,
// and `carkey-agent conformance --json` must say the same. The car's answers are the refusals
// it gives without the flag.
import XCTest
import Drivers
import Protocol
#if canImport(Glibc)
import Glibc
#endif

final class ConformanceTests: XCTestCase {
    private var car: AgentHarness!
    private var agent: BackgroundProcess!
    private var owner = ""

    override func setUpWithError() throws {
        car = AgentHarness()
    }

    override func tearDown() {
        car = nil
        agent = nil
    }

    /// The agent with --conformance (trusted time: the timestamp rule applies) and an owner.
    private func start(_ extra: [String] = []) throws {
        agent = try car.start(clockSync: "yes", ["--conformance"] + extra)
        XCTAssertTrue(agent.stderr.contains("carkey-agent: conformance mode: "), agent.stderr)
        owner = try car.enrollOwner().path
    }

    /// Runs `carkey phone` (optionally misbehaving), then waits for its link's checklist on the
    /// agent's stderr; returns the phone's result and the agent's conformance lines for it.
    private func visit(_ command: String, misbehave: String? = nil, extra: [String] = [],
                       file: StaticString = #filePath, line: UInt = #line) throws -> (phone: ProcessResult, report: [String]) {
        // The retry rule (H1a) counts one key's Hellos across links: a real phone does not
        // start a handshake every few milliseconds, and neither do these visits.
        usleep(600_000)
        let before = agent.stderr.count
        let misbehaviour = misbehave.map { ["--misbehave", $0] } ?? []
        let phone = try car.phone(command, key: owner, extra: misbehaviour + extra)
        let done = agent.wait(timeoutSeconds: 10) { String(agent.stderr.dropFirst(before)).contains(" summary: ") }
        XCTAssertTrue(done, "no checklist: \(agent.stderr.dropFirst(before))", file: file, line: line)
        let lines = String(agent.stderr.dropFirst(before)).split(separator: "\n").map(String.init)
            .filter { $0.hasPrefix("carkey-agent: conformance: ") }
            .map { String($0.dropFirst("carkey-agent: conformance: ".count)) }
        return (phone, lines)
    }

    private func deviations(_ report: [String]) -> [String] {
        report.compactMap { line in
            let words = line.split(separator: " ")
            guard words.count > 2, words[1] == "deviation" else { return nil }
            return String(words[2])
        }
    }

    private func summary(_ report: [String]) -> String { report.first { $0.contains(" summary: ") } ?? "" }

    func testAWellBehavedPhoneHasACleanChecklist() throws {
        try start()
        let visit = try visit("unlock")
        XCTAssertEqual(visit.phone.firstLine, "ok", visit.phone.stdout + visit.phone.stderr)
        XCTAssertEqual(deviations(visit.report), [], "\(visit.report)")
        XCTAssertTrue(summary(visit.report).contains("ended: the phone closed it; 0 deviation(s), 0 refusal(s)"), "\(visit.report)")
        for rule in ["16-framing", "R1", "H6", "H1a", "A1", "A3", "A4", "A5", "16-deadline", "S3", "S4", "12.4", "S6", "S9"] {
            XCTAssertTrue(visit.report.contains { $0.contains(" check \(rule) ok ") }, "\(rule) not passed: \(visit.report)")
        }
        // The enrollment's link was clean too.
        XCTAssertFalse(agent.stderr.contains(" deviation "), agent.stderr)

        let json = try car.agentTool(["conformance", "--state-dir", car.stateDir, "--json"])
        XCTAssertEqual(json.status, 0, json.stderr)
        guard case .object(let document) = try JSONTree.parse(Array(json.stdout.utf8)),
              case .array(let links)? = document["links"], case .object(let newest)? = links.first,
              case .object(let summary)? = newest["summary"], case .array(let checks)? = newest["checks"] else {
            return XCTFail(json.stdout)
        }
        XCTAssertEqual(links.count, 2, "the enrollment and the unlock")
        XCTAssertEqual(summary["deviations"], .integer(0))
        XCTAssertEqual(summary["transport"], .string("unix"))
        XCTAssertEqual(summary["commands"], .integer(1))
        XCTAssertTrue(checks.contains(.object(["type": .string("check"), "link": summary["link"]!, "rule": .string("A3"),
                                               "status": .string("ok"), "passed": .integer(1), "failed": .integer(0)])), "\(checks)")
        let text = try car.agentTool(["conformance", "--state-dir", car.stateDir])
        XCTAssertEqual(text.status, 0)
        XCTAssertTrue(text.stdout.contains(" check A3 ok 1 of 1: the AuthResponse arrives within the challenge lifetime\n"), text.stdout)
    }

    func testEachMisbehaviourIsNamedWithItsRule() throws {
        try start()
        // (mode, command, the phone's first line, the rules the report must name)
        let cases: [(String, String, String, [String])] = [
            ("command-before-session", "status", "fault: unexpectedMessage (23)", ["R2"]),
            ("auth-before-hello", "status", "fault: unknownChallenge (7)", ["A1"]),
            ("bad-fragment", "status", "closed: the car closed the connection", ["16-framing"]),
            ("replay-counter", "status", "fault: replayedCounter (11)", ["S4"]),
            ("counter-gap", "status", "ok", ["12.4"]),
            ("double-command", "unlock", "fault: busy (16)", ["S6"]),
            ("expired-command", "status", "fault: expiredCommand (13)", ["S9"]),
            ("stale-timestamp", "status", "fault: staleTimestamp (10)", ["A5"]),
            // The car closes a link without a session after 3 s (its handshake deadline).
            ("late-auth", "status", "closed: ", ["16-deadline"]),
            // Last: it spends the owner key's retry budget.
            ("hello-storm", "status", "fault: busy (16)", ["H6", "H6", "H6", "H6", "H6", "H6", "H6", "H1a", "H1a", "H1a", "H1a"]),
        ]
        for (mode, command, answer, rules) in cases {
            let extra = mode == "late-auth" ? ["--misbehave-delay", "4500"] : []
            let visit = try visit(command, misbehave: mode, extra: extra)
            XCTAssertTrue(visit.phone.firstLine.hasPrefix(answer), "\(mode): \(visit.phone.stdout) \(visit.phone.stderr)")
            XCTAssertTrue(visit.phone.stdout.contains("misbehaviour: \(mode)\n"), visit.phone.stdout)
            XCTAssertEqual(deviations(visit.report).sorted(), rules.sorted(), "\(mode): \(visit.report)")
            XCTAssertTrue(summary(visit.report).contains("; \(rules.count) deviation(s)"), "\(mode): \(visit.report)")
            for rule in Set(rules) {
                XCTAssertTrue(visit.report.contains { $0.contains(" check \(rule) FAIL ") }, "\(mode): \(visit.report)")
            }
        }
        // One line per deviation names the rule, where protocol.md states it, and the car's answer.
        XCTAssertTrue(agent.stderr.contains(" deviation S4 (protocol.md 11 S4) +"), agent.stderr)
        XCTAssertTrue(agent.stderr.contains("Command counter 1 repeats the last accepted counter"), agent.stderr)
        XCTAssertTrue(agent.stderr.contains(" deviation 12.4 (protocol.md 9, 12 step 4) +"), agent.stderr)
        XCTAssertTrue(agent.stderr.contains("[the car allowed it]"), agent.stderr)
        XCTAssertTrue(agent.stderr.contains(" deviation R2 (protocol.md 11 R2) +"), agent.stderr)
        XCTAssertTrue(agent.stderr.contains("[car answered unexpectedMessage]"), agent.stderr)

        // The report is kept for the last links only, and the console command shows it too.
        let report = try car.agentTool(["conformance", "--state-dir", car.stateDir])
        XCTAssertEqual(report.status, 0, report.stderr)
        XCTAssertTrue(report.stdout.contains(" check H1a FAIL "), report.stdout)
        XCTAssertEqual(report.stdout.components(separatedBy: " summary: ").count - 1, ConformanceObserver.endedReportsKept)
    }

    /// Rule A3 needs a deadline above the challenge lifetime (the default deadline closes the
    /// link first, as the other test shows).
    func testALateAuthResponseIsRuleA3() throws {
        let config = car.folder + "/agent.json"
        try Subprocess.write(#"{"link": {"handshakeDeadlineSeconds": 12}}"#, to: config)
        try start(["--config", config])
        let visit = try visit("status", misbehave: "late-auth")
        XCTAssertEqual(visit.phone.firstLine, "fault: challengeExpired (9)", visit.phone.stdout + visit.phone.stderr)
        XCTAssertEqual(deviations(visit.report), ["A3"], "\(visit.report)")
        let line = try XCTUnwrap(visit.report.first { $0.contains(" deviation A3 ") })
        XCTAssertTrue(line.contains(" ms after its Challenge; the challenge lifetime is 10000 ms [car answered challengeExpired]"), line)
    }

    /// docs/phone-app.md lists the modes `carkey phone --misbehave` knows, no more, no fewer.
    func testTheGuideListsEveryMisbehaviour() throws {
        let key = try car.keygen("phone")
        let other = try car.keygen("car")
        let result = try Subprocess.run("carkey", ["phone", "--key", key.path, "--connect", "unix:" + car.socketPath,
                                                   "--car-key", other.publicHex, "--vehicle", AgentHarness.vehicle,
                                                   "--misbehave", "nonsense", "status"])
        XCTAssertEqual(result.status, 2, result.stderr)
        let listed = try XCTUnwrap(result.stderr.split(separator: "\n").first { $0.contains("late-auth") }, result.stderr)
        let modes = Set(listed[listed.range(of: "late-auth")!.lowerBound...].split(separator: ",").map {
            String($0.drop { !$0.isLetter }.prefix { $0.isLetter || $0 == "-" })
        })
        var parts = String(#filePath).split(separator: "/", omittingEmptySubsequences: false)
        parts.removeLast(3)
        let doc = try Subprocess.read(parts.joined(separator: "/") + "/docs/phone-app.md")
        let table = doc.components(separatedBy: "| Mode | What the phone does | Rules reported |")[1]
            .components(separatedBy: "\n\n")[0]
        let documented = Set(table.split(separator: "\n").filter { $0.hasPrefix("| `") }.map {
            String($0.dropFirst(3).prefix { $0 != "`" })
        })
        XCTAssertEqual(documented, modes)
        XCTAssertEqual(modes.count, 10)
    }

    func testTheReportNeedsTheFlag() throws {
        agent = try car.start()
        let report = try car.agentTool(["conformance", "--state-dir", car.stateDir])
        XCTAssertEqual(report.status, 1)
        XCTAssertTrue(report.stderr.contains("conformance mode is off (run the agent with --conformance)"), report.stderr)
        XCTAssertFalse(agent.stderr.contains("conformance mode"), agent.stderr)
    }
}

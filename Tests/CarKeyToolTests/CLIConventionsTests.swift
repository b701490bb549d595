// One name per concept across both programs (docs/cli.md): the new names work, the old
// spellings still do for a release, and --help shows the new name and mentions the old one.
import XCTest
import Drivers

final class CLIConventionsTests: XCTestCase {
    private var folder = ""

    override func setUp() { folder = Subprocess.makeTemporaryDirectory() }
    override func tearDown() { Subprocess.removeTree(folder) }

    private func carkey(_ arguments: [String], file: StaticString = #filePath, line: UInt = #line) throws -> ProcessResult {
        try Subprocess.run("carkey", arguments)
    }

    private func lines(_ result: ProcessResult) -> [String] { result.stdout.split(separator: "\n").map(String.init) }

    func testShareAndRevokeSignWithKeyAndStillTakeOwner() throws {
        let owner = folder + "/owner.pem"
        XCTAssertEqual(try carkey(["keygen", "--out", owner]).status, 0)
        let holder = try carkey(["keygen", "--out", folder + "/holder.pem"]).stdout.filter { !$0.isWhitespace }
        let shareArguments = ["--holder", holder, "--vehicle", "OCK-SIM-0001", "--permissions", "unlock-only", "--not-after", "2099-01-01T00:00:00Z"]
        for (spelling, out) in [("--key", "new.share"), ("--owner", "old.share")] {
            let shared = try carkey(["share", spelling, owner] + shareArguments + ["--out", folder + "/" + out])
            XCTAssertEqual(shared.status, 0, "\(spelling): \(shared.stderr)")
            XCTAssertTrue(lines(shared).contains { $0.hasPrefix("serial ") }, shared.stdout)
        }

        // revoke: --key signs and --public-key is the target; an old command line (--owner with
        // --key as the target) means what it meant.
        let new = try carkey(["revoke", "--key", owner, "--vehicle", "OCK-SIM-0001", "--public-key", holder, "--out", folder + "/new.rev"])
        let old = try carkey(["revoke", "--owner", owner, "--vehicle", "OCK-SIM-0001", "--key", holder, "--out", folder + "/old.rev"])
        XCTAssertEqual(new.status, 0, new.stderr)
        XCTAssertEqual(old.status, 0, old.stderr)
        XCTAssertEqual(lines(new).first, lines(old).first, "the same target: \(new.stdout) \(old.stdout)")
        XCTAssertTrue(lines(new).first?.hasPrefix("target key-id ") ?? false, new.stdout)
        let both = try carkey(["revoke", "--owner", owner, "--vehicle", "OCK-SIM-0001", "--key", holder, "--public-key", holder,
                               "--out", folder + "/both.rev"])
        XCTAssertEqual(both.status, 2, both.stderr)
        XCTAssertTrue(both.stderr.contains("with '--owner', '--key' is the old spelling of '--public-key'"), both.stderr)
        XCTAssertFalse(FileManager.default.fileExists(atPath: folder + "/both.rev"), "nothing written")
        let none = try carkey(["revoke", "--key", owner, "--vehicle", "OCK-SIM-0001", "--out", folder + "/none.rev"])
        XCTAssertEqual(none.status, 2)
        XCTAssertTrue(none.stderr.contains("give one of '--serial', '--key-id' or '--public-key'"), none.stderr)

        let help = try carkey(["share", "--help"])
        XCTAssertTrue(help.stdout.contains("--key <KEYFILE>") && help.stdout.contains("(old spelling --owner still accepted)"), help.stdout)
    }

    func testTheAgentTakesVehicleAndStillVehicleID() throws {
        for spelling in ["--vehicle", "--vehicle-id"] {
            let car = AgentHarness()
            let agent = try car.start(clockSync: "yes", ["--console", "none", spelling, "OCK-NAME-0001"])
            XCTAssertTrue(agent.stderr.contains("simulated car OCK-NAME-0001 listening on"), "\(spelling): \(agent.stderr)")
            XCTAssertEqual(car.stop(), 0)
        }
        let help = try Subprocess.run("carkey-agent", ["run", "--help"])
        XCTAssertTrue(help.stdout.contains("--vehicle <ID>") && help.stdout.contains("(old spelling --vehicle-id still accepted)"), help.stdout)
    }

    /// The broker is --mqtt in both programs; --url still works in command send and audit verify.
    func testTheBrokerIsMQTTAndURLStillWorks() throws {
        let key = folder + "/fleet.pem"
        XCTAssertEqual(try carkey(["keygen", "--out", key]).status, 0)
        let closedPort = "mqtt://127.0.0.1:1"
        for spelling in ["--mqtt", "--url"] {
            let sent = try carkey(["command", "send", spelling, closedPort, "--key", key, "--vehicle", "OCK-SIM-0001",
                                   "--command", "status", "--timeout", "1"])
            XCTAssertEqual(sent.status, 1, "\(spelling) parses; nothing listens there: \(sent.stderr)")
            let unnamed = try carkey(["audit", "verify", "--car-key", "@" + key, spelling, closedPort])
            XCTAssertEqual(unnamed.status, 2)
            XCTAssertTrue(unnamed.stderr.contains("'--mqtt' needs '--vehicle'"), unnamed.stderr)
        }
        let help = try carkey(["command", "send", "--help"])
        XCTAssertTrue(help.stdout.contains("--mqtt <mqtt://HOST:PORT>") && help.stdout.contains("(old spelling --url still accepted)"), help.stdout)
    }

    /// Every command of both programs, found by walking `--help` from the top: each help ends
    /// with an "Exit status" section that lists 2 (usage) and, for a command that runs, 0.
    func testEveryHelpDocumentsItsExitStatuses() throws {
        var checked = 0
        for program in ["carkey", "carkey-agent"] {
            var pending: [[String]] = [[]]
            while let path = pending.popLast() {
                let help = try Subprocess.run(program, path + ["--help"])
                let name = ([program] + path).joined(separator: " ")
                XCTAssertEqual(help.status, 0, name)
                let sections = help.stdout.components(separatedBy: "\n\n")
                let commands = sections.first { $0.hasPrefix("Commands:\n") }
                let exits = try XCTUnwrap(sections.first { $0.hasPrefix("Exit status:\n") }, "\(name) --help has no Exit status section")
                let rows = exits.split(separator: "\n").dropFirst()
                let codes = rows.map { $0.split(separator: " ").first.map(String.init) ?? "" }
                XCTAssertTrue(zip(codes, rows).contains { $0.0 == "2" && $0.1.contains("usage error") }, "\(name): \(exits)")
                XCTAssertTrue(codes.contains("0"), "\(name): \(exits)")
                checked += 1
                for line in commands?.split(separator: "\n").dropFirst() ?? [] {
                    let sub = line.split(separator: " ").first.map(String.init) ?? ""
                    XCTAssertFalse(sub.isEmpty, "\(name): \(line)")
                    pending.append(path + [sub])
                }
            }
        }
        XCTAssertGreaterThanOrEqual(checked, 2 + 15 + 13, "every command of both programs was walked")
    }

    func testDemoNoLongerSaysBLEAndUWBAreNotBuilt() throws {
        let demo = try Subprocess.run("carkey-agent", ["demo"])
        XCTAssertEqual(demo.status, 0, demo.stderr)
        XCTAssertFalse(demo.stdout.contains("not built yet"), demo.stdout)
        XCTAssertTrue(demo.stdout.contains("Bluetooth LE link (BlueZ) and UWB ranging (DW3000) are built"), demo.stdout)
    }
}

import XCTest
@testable import CommandLineKit

final class ToolTests: XCTestCase {
    private let tool = Tool(
        name: "carkey",
        version: "9.9.9",
        summary: "test tool",
        commands: [
            Command(name: "keygen", summary: "Make a key",
                    options: [.value("out", short: "o", help: "Output file")],
                    arguments: [Positional("name", arity: .optional)],
                    action: { _ in 0 }),
            Command(name: "crypto", summary: "Crypto commands", subcommands: [
                Command(name: "verify", summary: "Verify a signature",
                        arguments: [Positional("file")], action: { _ in 0 }),
            ]),
        ]
    )

    private func usageLine(_ arguments: [String], file: StaticString = #filePath,
                           line: UInt = #line) -> String? {
        if case .usageError(let text) = tool.resolve(arguments) { return text }
        XCTFail("expected a usage error for \(arguments)", file: file, line: line)
        return nil
    }

    func testVersion() {
        guard case .version(let line) = tool.resolve(["--version"]) else { return XCTFail() }
        XCTAssertEqual(line, "carkey 9.9.9")
    }

    func testHelp() {
        for flag in ["--help", "-h"] {
            guard case .help(let text) = tool.resolve([flag]) else { return XCTFail(flag) }
            XCTAssertTrue(text.contains("Usage: carkey"), text)
            XCTAssertTrue(text.contains("keygen"), text)
            XCTAssertTrue(text.contains("crypto"), text)
            XCTAssertTrue(text.contains("--version"), text)
        }
    }

    func testCommandHelp() {
        guard case .help(let text) = tool.resolve(["keygen", "--help"]) else { return XCTFail() }
        XCTAssertTrue(text.contains("Usage: carkey keygen [options] [<name>]"), text)
        XCTAssertTrue(text.contains("-o, --out <value>"), text)
        guard case .help(let group) = tool.resolve(["crypto", "-h"]) else { return XCTFail() }
        XCTAssertTrue(group.contains("verify"), group)
    }

    func testDispatchLeaf() {
        guard case .run(let command, let invocation) = tool.resolve(["keygen", "-o", "k.pem", "car"]) else {
            return XCTFail()
        }
        XCTAssertEqual(command.name, "keygen")
        XCTAssertEqual(invocation.commandPath, ["keygen"])
        XCTAssertEqual(invocation.arguments.value("out"), "k.pem")
        XCTAssertEqual(invocation.arguments.argument("name"), "car")
        XCTAssertEqual(invocation.displayName, "carkey keygen")
    }

    func testDispatchNested() {
        guard case .run(let command, let invocation) = tool.resolve(["crypto", "verify", "sig.bin"]) else {
            return XCTFail()
        }
        XCTAssertEqual(command.name, "verify")
        XCTAssertEqual(invocation.commandPath, ["crypto", "verify"])
        XCTAssertEqual(invocation.arguments.argument("file"), "sig.bin")
    }

    func testUsageErrorsAreOneLine() {
        XCTAssertEqual(usageLine(["--foo"]), "carkey: unknown option '--foo' (see --help)")
        XCTAssertEqual(usageLine([]), "carkey: missing subcommand (see --help)")
        XCTAssertEqual(usageLine(["frob"]), "carkey: unknown subcommand 'frob' (see --help)")
        XCTAssertEqual(usageLine(["keygen", "--foo"]),
                       "carkey: unknown option '--foo' (see 'carkey keygen --help')")
        XCTAssertEqual(usageLine(["keygen", "--out"]),
                       "carkey: option '--out' requires a value (see 'carkey keygen --help')")
        XCTAssertEqual(usageLine(["crypto"]), "carkey: missing subcommand (see 'carkey crypto --help')")
        XCTAssertEqual(usageLine(["crypto", "verify"]),
                       "carkey: missing argument <file> (see 'carkey crypto verify --help')")
        for arguments in [["--foo"], [], ["frob"], ["keygen", "--foo"], ["crypto", "verify"]] {
            XCTAssertFalse(usageLine(arguments)?.contains("\n") ?? true)
        }
    }

    /// main's exit status: 0 from the action, 1 for a plain error, the error's own status for an
    /// ExitStatusError (the agent's "do not restart me" 78), 2 for a usage error.
    func testExitStatusFollowsTheError() {
        struct Plain: Error {}
        struct Refused: ExitStatusError { let exitStatus: Int32 = 78 }
        func status(_ error: (any Error)?) -> Int32 {
            let failing = Tool(name: "t", version: "1", summary: "s", commands: [
                Command(name: "go", summary: "go", action: { _ in
                    if let error { throw error }
                    return 0
                }),
            ])
            return failing.main(["t", "go"])
        }
        XCTAssertEqual(status(nil), 0)
        XCTAssertEqual(status(Plain()), 1)
        XCTAssertEqual(status(Refused()), 78)
        XCTAssertEqual(status(UsageError("bad")), 2)
    }

    func testVersionIsOnlyGlobal() {
        XCTAssertEqual(usageLine(["keygen", "--version"]),
                       "carkey: unknown option '--version' (see 'carkey keygen --help')")
    }

    /// A renamed option: the old spelling still parses (into the new name), --help shows the
    /// new name and says the old one is accepted.
    func testOldSpellingsParseAsTheNewNameAndHelpMentionsThem() throws {
        let renamed = Tool(name: "t", version: "1", summary: "s", commands: [
            Command(name: "run", summary: "run",
                    options: [.value("vehicle", aliases: ["vehicle-id"], placeholder: "ID", help: "The vehicle ID"),
                              .flag("json", help: "JSON")],
                    action: { _ in 0 }),
        ])
        for arguments in [["run", "--vehicle-id", "A"], ["run", "--vehicle-id=A"], ["run", "--vehicle", "A"]] {
            guard case .run(_, let invocation) = renamed.resolve(arguments) else { return XCTFail("\(arguments)") }
            XCTAssertEqual(invocation.arguments.value("vehicle"), "A", "\(arguments)")
            XCTAssertNil(invocation.arguments.value("vehicle-id"))
        }
        guard case .run(_, let both) = renamed.resolve(["run", "--vehicle-id", "A", "--vehicle", "B"]) else { return XCTFail() }
        XCTAssertEqual(both.arguments.values("vehicle"), ["A", "B"], "one option: the last value wins as for any repeat")
        guard case .usageError(let missing) = renamed.resolve(["run", "--vehicle-id"]) else { return XCTFail() }
        XCTAssertEqual(missing, "t: option '--vehicle-id' requires a value (see 't run --help')", "the spelling as typed")
        guard case .help(let text) = renamed.resolve(["run", "--help"]) else { return XCTFail() }
        XCTAssertTrue(text.contains("--vehicle <ID>  The vehicle ID (old spelling --vehicle-id still accepted)"), text)
        XCTAssertFalse(text.contains("--vehicle-id <"), "the old spelling is not listed as an option of its own: \(text)")
    }

    /// Every --help has an "Exit status" section; status 2 (usage) is always in it.
    func testEveryHelpHasAnExitStatusSection() {
        let documented = Tool(name: "t", version: "1", summary: "s", commands: [
            Command(name: "check", summary: "check", exitStatuses: [ExitStatus(0, "valid"), ExitStatus(1, "invalid"),
                                                                    ExitStatus(3, "no agent")],
                    action: { _ in 0 }),
            Command(name: "plain", summary: "plain", action: { _ in 0 }),
            Command(name: "group", summary: "group", subcommands: [Command(name: "leaf", summary: "leaf", action: { _ in 0 })]),
        ])
        let expected: [[String]: [String]] = [
            []: ["  0  --help, --version", "  2  usage error", "     otherwise the command's, listed in 't <command> --help'"],
            ["check"]: ["  0  valid", "  1  invalid", "  2  usage error", "  3  no agent"],
            ["plain"]: ["  0  done", "  1  failed: the reason in one line on stderr", "  2  usage error"],
            ["group"]: ["  0  --help", "  2  usage error", "     otherwise the subcommand's, listed in 't group <command> --help'"],
            ["group", "leaf"]: ["  0  done", "  2  usage error"],
        ]
        for (path, lines) in expected {
            guard case .help(let text) = documented.resolve(path + ["--help"]) else { return XCTFail("\(path)") }
            let section = text.components(separatedBy: "\nExit status:\n")
            XCTAssertEqual(section.count, 2, "one Exit status section: \(text)")
            let rows = section.last?.split(separator: "\n").map(String.init) ?? []
            var cursor = rows.startIndex
            for line in lines {
                guard let found = rows[cursor...].firstIndex(where: { $0.hasPrefix(line) }) else {
                    XCTFail("\(path): no '\(line)' in order in \(rows)")
                    break
                }
                cursor = found + 1
            }
        }
    }
}

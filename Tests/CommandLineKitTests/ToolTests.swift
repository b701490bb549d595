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
}

// The console's dispatcher: routing, bounded words, errors that quote safely, the PIN echo mask.
import XCTest
@testable import carkey_agent

final class ConsoleCommandsTests: XCTestCase {
    private final class Echo: ConsoleCommandGroup {
        let help: [(usage: String, summary: String)] = [("echo WORDS", "repeat")]
        let verbs: Set<String> = ["echo"]
        func run(_ words: [String]) -> [String] { [words.dropFirst().joined(separator: "+")] }
    }

    private let commands = ConsoleCommands(groups: [Echo()])

    func testRoutesByTheFirstWord() {
        XCTAssertEqual(commands.answer("echo a  b\tc"), ["a+b+c"])
        XCTAssertEqual(commands.answer(""), [])
        XCTAssertEqual(commands.answer("help"), ["commands:", "  echo WORDS      repeat", "  help [COMMAND]  this list, or one command"])
        XCTAssertEqual(commands.answer("help echo"), ["  echo WORDS  repeat"])
        XCTAssertEqual(commands.answer("help nope"), ["error: no command 'nope' (type help)"])
    }

    func testUnknownAndMalformedInputIsOneSafeErrorLine() {
        XCTAssertEqual(commands.answer("reboot now"), ["error: unknown command 'reboot' (type help)"])
        XCTAssertEqual(commands.answer("\u{1B}[2J"), ["error: unknown command '[2J' (type help)"])
        XCTAssertEqual(commands.answer("\u{FFFD}\u{FFFD}"), ["error: unknown command (type help)"])
        XCTAssertEqual(commands.answer(String(repeating: "y", count: 40)), ["error: unknown command 'yyyyyyyyyyyyyyyyyyyyyyyy...' (type help)"])
        XCTAssertEqual(commands.answer("echo " + String(repeating: "z", count: 65)), ["error: malformed input (at most 8 words of 64 bytes)"])
        XCTAssertEqual(commands.answer("echo 1 2 3 4 5 6 7 8"), ["error: malformed input (at most 8 words of 64 bytes)"])
        // A signed service answer is one long hex word: allowed up to its maximum, and only hex.
        let longest = String(repeating: "a", count: ConsoleCommands.maxHexWordBytes)
        XCTAssertEqual(commands.answer("echo " + longest), [longest])
        XCTAssertEqual(commands.answer("echo " + longest + "a"), ["error: malformed input (at most 8 words of 64 bytes)"])
        XCTAssertEqual(commands.answer("echo " + String(repeating: "g", count: 100)), ["error: malformed input (at most 8 words of 64 bytes)"])
    }

    func testOnlyThePINOfServiceOnIsMasked() {
        func masks(_ text: String) -> Bool { ConsoleCommands.masksSecret(Array(text.utf8)) }
        XCTAssertFalse(masks("service"))
        XCTAssertFalse(masks("service on"))
        XCTAssertFalse(masks("service on "))
        XCTAssertTrue(masks("service on 2"))
        XCTAssertTrue(masks("service  on\t2468"))
        XCTAssertFalse(masks("status on 2"))
    }
}

import XCTest
@testable import CommandLineKit

final class ArgumentParserTests: XCTestCase {
    private let parser = ArgumentParser(
        options: [
            .flag("verbose", short: "v", help: "More output"),
            .flag("dry-run", help: "Do nothing"),
            .value("key", short: "k", placeholder: "file", help: "Key file"),
            .value("count", help: "How many"),
        ],
        positionals: [Positional("input", arity: .optional)]
    )

    private func usageError(_ arguments: [String], using parser: ArgumentParser? = nil,
                            file: StaticString = #filePath, line: UInt = #line) -> UsageError? {
        do {
            _ = try (parser ?? self.parser).parse(arguments)
            XCTFail("expected a usage error for \(arguments)", file: file, line: line)
            return nil
        } catch let error as UsageError {
            return error
        } catch {
            XCTFail("unexpected error \(error)", file: file, line: line)
            return nil
        }
    }

    func testEmptyArguments() throws {
        let parsed = try parser.parse([String]())
        XCTAssertFalse(parsed.flag("verbose"))
        XCTAssertNil(parsed.value("key"))
        XCTAssertEqual(parsed.positionals, [])
        XCTAssertFalse(parsed.helpRequested)
    }

    func testFlags() throws {
        let parsed = try parser.parse(["--verbose", "--dry-run", "-v"])
        XCTAssertTrue(parsed.flag("verbose"))
        XCTAssertEqual(parsed.count("verbose"), 2)
        XCTAssertTrue(parsed.flag("dry-run"))
        XCTAssertFalse(parsed.flag("nonexistent"))
    }

    func testValueSeparateArgument() throws {
        let parsed = try parser.parse(["--key", "car.pem"])
        XCTAssertEqual(parsed.value("key"), "car.pem")
        XCTAssertEqual(parsed.positionals, [])
    }

    func testValueWithEquals() throws {
        let parsed = try parser.parse(["--key=car.pem", "--count=3"])
        XCTAssertEqual(parsed.value("key"), "car.pem")
        XCTAssertEqual(try parsed.integer("count"), 3)
    }

    func testValueWithEqualsKeepsLaterEquals() throws {
        XCTAssertEqual(try parser.parse(["--key=a=b"]).value("key"), "a=b")
        XCTAssertEqual(try parser.parse(["--key="]).value("key"), "")
    }

    func testShortValueForms() throws {
        XCTAssertEqual(try parser.parse(["-k", "a.pem"]).value("key"), "a.pem")
        XCTAssertEqual(try parser.parse(["-ka.pem"]).value("key"), "a.pem")
    }

    func testValueMayStartWithSingleDash() throws {
        XCTAssertEqual(try parser.parse(["--key", "-"]).value("key"), "-")
        XCTAssertEqual(try parser.parse(["--count", "-5"]).integer("count"), -5)
    }

    func testRepeatedValuesKeepOrderAndLastWins() throws {
        let parsed = try parser.parse(["--key", "a", "--key=b", "-k", "c"])
        XCTAssertEqual(parsed.values("key"), ["a", "b", "c"])
        XCTAssertEqual(parsed.value("key"), "c")
    }

    func testMissingValueAtEnd() {
        XCTAssertEqual(usageError(["--key"]), .missingValue("--key"))
        XCTAssertEqual(usageError(["-k"]), .missingValue("-k"))
        XCTAssertEqual(usageError(["--key"])?.message, "option '--key' requires a value")
    }

    func testMissingValueBeforeAnotherLongOption() {
        XCTAssertEqual(usageError(["--key", "--verbose"]), .missingValue("--key"))
        XCTAssertEqual(usageError(["--key", "--"]), .missingValue("--key"))
    }

    func testFlagWithValueIsAnError() {
        XCTAssertEqual(usageError(["--verbose=yes"]), .unexpectedValue("--verbose"))
        XCTAssertEqual(usageError(["--help=me"]), .unexpectedValue("--help"))
    }

    func testUnknownOptions() {
        XCTAssertEqual(usageError(["--foo"]), .unknownOption("--foo"))
        XCTAssertEqual(usageError(["--foo=1"]), .unknownOption("--foo"))
        XCTAssertEqual(usageError(["-x"]), .unknownOption("-x"))
        XCTAssertEqual(usageError(["--foo"])?.message, "unknown option '--foo'")
    }

    func testShortFlagsAreNotClustered() {
        XCTAssertEqual(usageError(["-vv"]), .unknownOption("-vv"))
    }

    func testInvalidInteger() throws {
        let parsed = try parser.parse(["--count", "three"])
        XCTAssertThrowsError(try parsed.integer("count")) { error in
            XCTAssertEqual(error as? UsageError,
                           .invalidValue("three", for: "--count", expected: "an integer"))
        }
        XCTAssertNil(try parser.parse([String]()).integer("count"))
    }

    func testRequire() throws {
        XCTAssertEqual(try parser.parse(["--key", "a"]).require("key"), "a")
        XCTAssertThrowsError(try parser.parse([String]()).require("key")) { error in
            XCTAssertEqual(error as? UsageError, .missingOption("--key"))
        }
    }

    func testPositionalsMixedWithOptions() throws {
        let parsed = try parser.parse(["-v", "frame.bin", "--key", "k.pem"])
        XCTAssertEqual(parsed.positionals, ["frame.bin"])
        XCTAssertEqual(parsed.argument("input"), "frame.bin")
        XCTAssertEqual(parsed.value("key"), "k.pem")
        XCTAssertTrue(parsed.flag("verbose"))
    }

    func testDoubleDashEndsOptions() throws {
        let parsed = try parser.parse(["--", "--verbose"])
        XCTAssertEqual(parsed.positionals, ["--verbose"])
        XCTAssertFalse(parsed.flag("verbose"))
    }

    func testLoneDashIsPositional() throws {
        XCTAssertEqual(try parser.parse(["-"]).argument("input"), "-")
    }

    func testTooManyPositionals() {
        XCTAssertEqual(usageError(["a", "b"]), .unexpectedArgument("b"))
        XCTAssertEqual(usageError(["x"], using: ArgumentParser()), .unexpectedArgument("x"))
    }

    func testRequiredPositionals() throws {
        let parser = ArgumentParser(positionals: [
            Positional("key"),
            Positional("out", arity: .optional),
            Positional("frame"),
        ])
        XCTAssertEqual(usageError([], using: parser), .missingArgument("key"))
        XCTAssertEqual(usageError(["a"], using: parser), .missingArgument("frame"))
        let two = try parser.parse(["a", "b"])
        XCTAssertEqual(two.argument("key"), "a")
        XCTAssertNil(two.argument("out"))
        XCTAssertEqual(two.argument("frame"), "b")
        let three = try parser.parse(["a", "b", "c"])
        XCTAssertEqual(three.argument("out"), "b")
        XCTAssertEqual(three.argument("frame"), "c")
    }

    func testRepeatingPositionals() throws {
        let parser = ArgumentParser(positionals: [Positional("topic"), Positional("files", arity: .oneOrMore)])
        XCTAssertEqual(usageError(["t"], using: parser), .missingArgument("files"))
        let parsed = try parser.parse(["t", "a", "b", "c"])
        XCTAssertEqual(parsed.argument("topic"), "t")
        XCTAssertEqual(parsed.arguments("files"), ["a", "b", "c"])

        let any = ArgumentParser(positionals: [Positional("files", arity: .zeroOrMore)])
        XCTAssertEqual(try any.parse([String]()).arguments("files"), [])
    }

    func testHelpStopsParsing() throws {
        XCTAssertTrue(try parser.parse(["--help"]).helpRequested)
        XCTAssertTrue(try parser.parse(["-h", "--no-such-option"]).helpRequested)
        // Help wins over missing positionals.
        XCTAssertTrue(try ArgumentParser(positionals: [Positional("x")]).parse(["-h"]).helpRequested)
    }

    func testParsePrefixStopsAtFirstPositional() throws {
        let (parsed, rest) = try parser.parsePrefix(["-v", "demo", "--foo", "x"])
        XCTAssertTrue(parsed.flag("verbose"))
        XCTAssertEqual(rest, ["demo", "--foo", "x"])
    }
}

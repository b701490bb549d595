// Board files: the shipped ones parse, and every kind of mistake names the key it is about.
import XCTest
@testable import Drivers
#if canImport(Glibc)
import Glibc
#endif

final class GPIOBoardDescriptionTests: XCTestCase {
    /// A minimal valid document; tests replace one piece at a time.
    private let minimal = """
    {
      "name": "t",
      "pulseWidthMillis": 250,
      "outputs": {
        "lock": {"chip": "gpiochip0", "line": 1},
        "unlock": {"chip": "gpiochip0", "line": 2},
        "trunkRelease": {"chip": "gpiochip0", "line": 3}
      },
      "inputs": {
        "doorOpen": {"chip": "gpiochip0", "line": 4},
        "trunkOpen": {"chip": "gpiochip0", "line": 5},
        "pairingButton": {"chip": "gpiochip0", "line": 6}
      }
    }
    """

    private func expectError(_ json: String, key: String?, _ check: (BoardDescriptionError) -> Bool = { _ in true },
                             file: StaticString = #filePath, line: UInt = #line) {
        do {
            let board = try BoardDescription.parse(json: json)
            XCTFail("parsed unexpectedly: \(board)", file: file, line: line)
        } catch {
            XCTAssertEqual(error.key, key, "\(error)", file: file, line: line)
            XCTAssertTrue(check(error), "\(error)", file: file, line: line)
            if let key { XCTAssertTrue(error.description.hasPrefix(key + ":"), error.description, file: file, line: line) }
        }
    }

    /// Every board description in board/ (agent.example.json is an agent config, not a board).
    private func shippedBoardNames() throws -> [String] {
        let folder = GPIOFixtures.repositoryRoot + "/board"
        guard let directory = opendir(folder) else { throw Errno.current("opendir \(folder)") }
        defer { closedir(directory) }
        var names: [String] = []
        while let entry = readdir(directory) {
            let name = DirectoryEntry.name(entry)
            if name.hasSuffix(".json"), name != "agent.example.json" { names.append(String(name.dropLast(5))) }
        }
        return names.sorted()
    }

    func testShippedBoardFilesParse() throws {
        // The list is read from the folder, so a new board file is checked without being added
        // here; the expected set only makes a lost or renamed file show up.
        let names = try shippedBoardNames()
        XCTAssertEqual(names, ["raspberrypi4-no-uwb", "raspberrypi4-uwb", "raspberrypi5-no-uwb", "raspberrypi5-uwb", "simulated", "sk-tda4vm"])
        for name in names {
            let board = try BoardDescription.load(path: GPIOFixtures.boardPath(name))
            XCTAssertEqual(board.name, name)
            XCTAssertEqual(Set(board.outputs.keys), Set(OutputRole.allCases), name)
            XCTAssertEqual(Set(board.inputs.keys), Set(InputRole.allCases), name)
            XCTAssertEqual(board.debounceMillis, 30, name)
            XCTAssertEqual(board.pairingHoldMillis, 5000, name)
            XCTAssertTrue(BoardDescription.pulseWidthRange.contains(board.pulseWidthMillis), name)
            // Safety: actuators must be active-high with a pull-down, so an unconfigured or
            // released pin (input with pull-down) is the inactive, relay-off level.
            for role in OutputRole.allCases {
                let config = try XCTUnwrap(board.outputs[role])
                XCTAssertFalse(config.activeLow, "\(name) \(role)")
                XCTAssertEqual(config.bias, .pullDown, "\(name) \(role)")
            }
        }
    }

    func testRaspberryPiBoardsAddressChipsByLabel() throws {
        for variant in ["uwb", "no-uwb"] {
            let pi4 = try BoardDescription.load(path: GPIOFixtures.boardPath("raspberrypi4-" + variant))
            let pi5 = try BoardDescription.load(path: GPIOFixtures.boardPath("raspberrypi5-" + variant))
            XCTAssertEqual(Set(pi4.outputs.values.map(\.chipAddress) + pi4.inputs.values.map(\.chipAddress)), [.label("pinctrl-bcm2711")])
            XCTAssertEqual(Set(pi5.outputs.values.map(\.chipAddress) + pi5.inputs.values.map(\.chipAddress)), [.label("pinctrl-rp1")])
            // Same header wiring on both boards.
            XCTAssertEqual(pi4.outputs.mapValues(\.line), pi5.outputs.mapValues(\.line), variant)
            XCTAssertEqual(pi4.inputs.mapValues(\.line), pi5.inputs.mapValues(\.line), variant)
            XCTAssertEqual(pi4.outputs[.lock]?.line, 17)
            XCTAssertEqual(pi4.inputs[.pairingButton]?.line, 26)
        }
    }

    /// The Pi files come in pairs, with and without the UWB module; the module is the only
    /// difference, so a wiring fix made in one file and forgotten in the other fails here.
    func testEachPiFileWithoutTheModuleIsItsPairWithoutTheUWBObject() throws {
        for pi in ["raspberrypi4", "raspberrypi5"] {
            let with = try BoardDescription.load(path: GPIOFixtures.boardPath(pi + "-uwb"))
            let without = try BoardDescription.load(path: GPIOFixtures.boardPath(pi + "-no-uwb"))
            XCTAssertNotNil(with.uwb, pi)
            XCTAssertNil(without.uwb, pi)
            XCTAssertEqual(with.outputs, without.outputs, pi)
            XCTAssertEqual(with.inputs, without.inputs, pi)
            XCTAssertEqual([with.pulseWidthMillis, with.debounceMillis, with.pairingHoldMillis, with.feedbackSettleMillis],
                           [without.pulseWidthMillis, without.debounceMillis, without.pairingHoldMillis, without.feedbackSettleMillis], pi)
        }
    }

    func testMinimalDocumentGetsDefaults() throws {
        let board = try BoardDescription.parse(json: minimal)
        XCTAssertEqual(board.pulseWidthMillis, 250)
        XCTAssertEqual(board.debounceMillis, 30)
        XCTAssertEqual(board.pairingHoldMillis, 5000)
        XCTAssertNil(board.outputs[.feedbackLight])
        XCTAssertNil(board.inputs[.lockState])
        XCTAssertEqual(board.outputs[.lock], GPIOLineConfig(chip: "gpiochip0", line: 1, activeLow: false, bias: .asIs, drive: .pushPull))
    }

    func testChipAddressClassification() {
        XCTAssertEqual(GPIOChipAddress("gpiochip4"), .name("gpiochip4"))
        XCTAssertEqual(GPIOChipAddress("/dev/gpiochip0"), .path("/dev/gpiochip0"))
        XCTAssertEqual(GPIOChipAddress("pinctrl-rp1"), .label("pinctrl-rp1"))
        XCTAssertEqual(GPIOChipAddress("gpiochip"), .label("gpiochip"))
        XCTAssertEqual(GPIOChipAddress("gpiochipX"), .label("gpiochipX"))
    }

    func testBadBiasNamesTheKeyAndTheChoices() {
        let json = minimal.replacing(#""lock": {"chip": "gpiochip0", "line": 1}"#,
                                                with: #""lock": {"chip": "gpiochip0", "line": 1, "bias": "pullup"}"#)
        expectError(json, key: "outputs.lock.bias") {
            $0.description == #"outputs.lock.bias: expected one of "disabled", "pull-up", "pull-down", "as-is""#
        }
    }

    func testBadDriveAndActiveLowAreNamed() {
        expectError(minimal.replacing(#""line": 3}"#, with: #""line": 3, "drive": "totem"}"#), key: "outputs.trunkRelease.drive")
        expectError(minimal.replacing(#""line": 4}"#, with: #""line": 4, "activeLow": "yes"}"#), key: "inputs.doorOpen.activeLow")
    }

    func testDriveOnAnInputIsAnUnknownKey() {
        expectError(minimal.replacing(#""line": 6}"#, with: #""line": 6, "drive": "open-drain"}"#), key: "inputs.pairingButton.drive") {
            if case .unknownKey = $0 { return true } else { return false }
        }
    }

    func testUnknownKeysAreNamedAtEveryLevel() {
        expectError(minimal.replacing(#""name": "t","#, with: #""name": "t", "pulseWidthMs": 3,"#), key: "pulseWidthMs")
        expectError(minimal.replacing(#""lock": {"#, with: #""lok": {"#), key: "outputs.lok")
        expectError(minimal.replacing(#""line": 2}"#, with: #""line": 2, "activelow": true}"#), key: "outputs.unlock.activelow")
    }

    func testMissingRequiredKeysAreNamed() {
        expectError(minimal.replacing(#""pulseWidthMillis": 250,"#, with: ""), key: "pulseWidthMillis")
        expectError(minimal.replacing(#""trunkRelease": {"chip": "gpiochip0", "line": 3}"#, with: #""feedbackLight": {"chip": "gpiochip0", "line": 3}"#),
                    key: "outputs.trunkRelease")
        expectError(minimal.replacing(#""chip": "gpiochip0", "line": 5"#, with: #""chip": "gpiochip0""#), key: "inputs.trunkOpen.line")
        expectError(minimal.replacing(#""chip": "gpiochip0", "line": 4"#, with: #""line": 4"#), key: "inputs.doorOpen.chip")
    }

    func testOutOfRangeNumbersAreRejected() {
        for bad in ["9", "1001", "-5", "250.5", "\"250\""] {
            expectError(minimal.replacing(#""pulseWidthMillis": 250"#, with: #""pulseWidthMillis": \#(bad)"#), key: "pulseWidthMillis")
        }
        expectError(minimal.replacing(#""name": "t","#, with: #""name": "t", "debounceMillis": 5000,"#), key: "debounceMillis")
        expectError(minimal.replacing(#""name": "t","#, with: #""name": "t", "pairingHoldMillis": 10,"#), key: "pairingHoldMillis")
        expectError(minimal.replacing(#""line": 1}"#, with: #""line": 530}"#), key: "outputs.lock.line")
        expectError(minimal.replacing(#""line": 1}"#, with: #""line": -1}"#), key: "outputs.lock.line")
    }

    func testTwoRolesOnOneLineAreRejected() {
        expectError(minimal.replacing(#""line": 2}"#, with: #""line": 1}"#), key: "outputs.unlock") {
            $0 == .duplicateLine(key: "outputs.unlock", sameAs: "outputs.lock")
        }
        expectError(minimal.replacing(#""line": 6}"#, with: #""line": 3}"#), key: "inputs.pairingButton")
    }

    func testWrongTypesAndMalformedJSON() {
        expectError(#"["not", "an", "object"]"#, key: "(top level)")
        expectError(minimal.replacing(#""lock": {"chip": "gpiochip0", "line": 1}"#, with: #""lock": 17"#), key: "outputs.lock")
        expectError(#"{"name": "t", "#, key: nil) { if case .malformedJSON = $0 { return true } else { return false } }
        expectError("", key: nil)
        expectError(String(repeating: " ", count: BoardDescription.maxFileBytes + 1), key: nil)
    }

    func testGarbageBytesNeverCrash() {
        var generator = SystemRandomNumberGenerator()
        for _ in 0..<200 {
            let bytes = (0..<Int.random(in: 0...64, using: &generator)).map { _ in UInt8.random(in: 0...255, using: &generator) }
            XCTAssertThrowsError(try BoardDescription.parse(bytes))
        }
    }

    func testMissingFileIsUnreadableWithPath() {
        XCTAssertThrowsError(try BoardDescription.load(path: "/nonexistent/board.json")) { error in
            guard case .unreadable(let path, _)? = error as? BoardDescriptionError else { return XCTFail("\(error)") }
            XCTAssertEqual(path, "/nonexistent/board.json")
        }
    }
}

// The agent's config file and flags, in process: the shipped example, every key's checks
// (errors name the key, never the value), relative paths, flags over the file, mode defaults.
import XCTest
import CommandLineKit
import Drivers
import Protocol
@testable import carkey_agent

final class AgentConfigTests: XCTestCase {
    static var repositoryRoot: String {
        var parts = String(#filePath).split(separator: "/", omittingEmptySubsequences: false)
        parts.removeLast(3)
        return parts.joined(separator: "/")
    }

    private func parse(_ json: String, base: String = "/etc/opencarkey") throws(ConfigError) -> AgentConfig {
        try AgentConfig.parse(Array(json.utf8), baseDirectory: base)
    }

    private func error(_ json: String) -> ConfigError? {
        do {
            _ = try parse(json)
            return nil
        } catch {
            return error
        }
    }

    func testTheShippedExampleLoads() throws {
        let path = Self.repositoryRoot + "/board/agent.example.json"
        let config = try AgentConfig.load(path: path)
        XCTAssertEqual(config.vehicleID?.description, "OCK-SIM-0001")
        XCTAssertEqual(config.boardFile, Self.repositoryRoot + "/board/simulated.json", "relative to the config file's folder")
        XCTAssertEqual(config.consoleDevice, .pty)
        XCTAssertEqual(config.consoleBaud, 115_200)
        XCTAssertEqual(config.logLevel, .info)
        XCTAssertNotNil(config.servicePIN)
        XCTAssertEqual(config.serviceTimeoutSeconds, 300)
        XCTAssertEqual(config.vault, .file)
        XCTAssertEqual(config.sourcePath, path)
        // The board it names parses too.
        XCTAssertNoThrow(try BoardDescription.load(path: try XCTUnwrap(config.boardFile)))
    }

    func testEmptyFileMeansDefaults() throws {
        let config = try parse("{}")
        XCTAssertNil(config.vehicleID)
        XCTAssertNil(config.stateDirectory)
        XCTAssertNil(config.consoleDevice)
        XCTAssertEqual(config.consoleBaud, SerialPort.defaultBaud)
        XCTAssertNil(config.servicePIN)
    }

    func testPathsAndDevices() throws {
        let config = try parse(#"{"stateDirectory": "state/", "board": "/opt/b.json", "console": {"tty": "/dev/ttyAMA0", "baud": 9600}}"#)
        XCTAssertEqual(config.stateDirectory, "/etc/opencarkey/state")
        XCTAssertEqual(config.boardFile, "/opt/b.json")
        XCTAssertEqual(config.consoleDevice, .tty("/dev/ttyAMA0"))
        XCTAssertEqual(config.consoleBaud, 9600)
        for (setting, device) in [("pty", ConsoleDevice.pty), ("stdio", .stdio), ("none", ConsoleDevice.none)] {
            XCTAssertEqual(try parse(#"{"console": {"tty": "\#(setting)"}}"#).consoleDevice, device)
        }
    }

    func testUnknownKeysAreNamed() {
        XCTAssertEqual(error(#"{"boardFile": "x"}"#)?.key, "boardFile")
        XCTAssertEqual(error(#"{"console": {"device": "pty"}}"#)?.key, "console.device")
        XCTAssertEqual(error(#"{"service": {"PIN": "1234"}}"#)?.key, "service.PIN")
        if case .unknownKey(_, let expected)? = error(#"{"x": 1}"#) {
            XCTAssertTrue(expected.contains("console") && expected.contains("service"), expected)
        } else {
            XCTFail("unknown key expected")
        }
    }

    func testBadValuesAreNamedWithoutTheValue() {
        let cases: [(String, String)] = [
            (#"{"vehicleID": "\#(String(repeating: "V", count: 33))"}"#, "vehicleID"),
            (#"{"vehicleID": 12}"#, "vehicleID"),
            (#"{"stateDirectory": ""}"#, "stateDirectory"),
            (#"{"board": false}"#, "board"),
            (#"{"logLevel": "trace"}"#, "logLevel"),
            (#"{"console": []}"#, "console"),
            (#"{"console": {"tty": "ttyAMA0"}}"#, "console.tty"),
            (#"{"console": {"baud": 115201}}"#, "console.baud"),
            (#"{"console": {"baud": "115200"}}"#, "console.baud"),
            (#"{"service": {"pin": "123"}}"#, "service.pin"),
            (#"{"service": {"pin": "1234567890123"}}"#, "service.pin"),
            (#"{"service": {"pin": "98x6"}}"#, "service.pin"),
            (#"{"service": {"pin": "24681"}}"#, "service.pin"),
            (#"{"service": {"pinEnabled": 1}}"#, "service.pinEnabled"),
            (#"{"service": {"challengeSeconds": 601}}"#, "service.challengeSeconds"),
            (#"{"service": {"timeoutSeconds": 29}}"#, "service.timeoutSeconds"),
            (#"{"service": {"timeoutSeconds": 3601}}"#, "service.timeoutSeconds"),
            (#"{"service": {"timeoutSeconds": 1.5}}"#, "service.timeoutSeconds"),
        ]
        for (json, key) in cases {
            let failure = error(json)
            XCTAssertEqual(failure?.key, key, json)
            XCTAssertFalse("\(failure.map { "\($0)" } ?? "")".contains("98x6"), "values are not echoed")
        }
        XCTAssertNil(error(#"{"service": {"pin": "000000"}}"#), "leading zeros are a valid PIN (it is a string)")
        if case .malformedJSON? = error(#"{"a": "#) {} else { XCTFail("malformed JSON") }
        if case .malformedJSON? = error(String(repeating: " ", count: AgentConfig.maxFileBytes + 1)) {} else { XCTFail("too large") }
    }

    func testServicePINIsASecret() throws {
        let pin = try XCTUnwrap(ServicePIN(text: "246810"))
        XCTAssertTrue(pin.matches("246810"))
        XCTAssertFalse(pin.matches("246811"))
        XCTAssertFalse(pin.matches("24681"))
        XCTAssertEqual("\(pin)", "(set)")
        let config = try parse(#"{"service": {"pin": "246810"}}"#)
        let shown = config.displayLines(consoleEndpoint: "/dev/pts/1", cloud: nil).joined(separator: "\n")
        XCTAssertTrue(shown.contains("service.pin: set (hidden)"), shown)
        XCTAssertFalse(shown.contains("246810"), shown)
    }

    private func effective(_ arguments: [String], simulate: Bool) throws -> AgentConfig {
        let parser = ArgumentParser(options: [.flag("simulate", help: ""), .value("state-dir", help: ""), .value("vehicle", aliases: ["vehicle-id"], help: "")]
                                    + ConfigOverrides.optionSpecs)
        return try ConfigOverrides.effectiveConfig(try parser.parse(arguments), simulate: simulate)
    }

    func testFlagsOverrideTheFile() throws {
        let folder = AgentTestSupport.temporaryDirectory()
        defer { AgentTestSupport.removeTree(folder) }
        let path = folder + "/agent.json"
        try Files.writeAtomically(Array(#"{"vehicleID": "FILE-ID", "stateDirectory": "/var/lib/x", "board": "b/p5.json", "console": {"tty": "/dev/ttyS0"}, "logLevel": "warn"}"#.utf8), to: path)
        let fromFile = try effective(["--config", path], simulate: false)
        XCTAssertEqual(fromFile.consoleDevice, .tty("/dev/ttyS0"))
        XCTAssertEqual(fromFile.boardFile, folder + "/b/p5.json")
        XCTAssertEqual(fromFile.logLevel, .warn)
        let config = try effective(["--config", path, "--vehicle-id", "FLAG-ID", "--state-dir", "/tmp/s/", "--console", "none",
                                    "--console-baud", "9600", "--log-level", "debug", "--board", "b.json"], simulate: false)
        XCTAssertEqual(config.vehicleID?.description, "FLAG-ID")
        XCTAssertEqual(config.stateDirectory, "/tmp/s")
        XCTAssertEqual(config.consoleDevice, ConsoleDevice.none)
        XCTAssertEqual(config.consoleBaud, 9600)
        XCTAssertEqual(config.logLevel, .debug)
        XCTAssertEqual(config.boardFile, "b.json", "flags are relative to the working directory")
        XCTAssertEqual(config.sourcePath, path)
        let renamed = try effective(["--config", path, "--vehicle", "NEW-SPELLING"], simulate: false)
        XCTAssertEqual(renamed.vehicleID?.description, "NEW-SPELLING", "--vehicle, with --vehicle-id its old spelling")
    }

    func testModeDefaults() throws {
        let simulated = try effective(["--state-dir", "/tmp/s"], simulate: true)
        XCTAssertEqual(simulated.vehicleID?.description, ConfigOverrides.defaultSimulatedVehicleID)
        XCTAssertEqual(simulated.consoleDevice, .pty)
        XCTAssertNil(simulated.boardFile, "the built-in simulated board")
        XCTAssertThrowsError(try effective(["--state-dir", "/tmp/s", "--vehicle-id", "V"], simulate: false)) { error in
            XCTAssertTrue("\(error)".contains("'--board' (or 'board' in the config file) is required without '--simulate'"), "\(error)")
        }
        XCTAssertThrowsError(try effective([], simulate: true)) { error in
            XCTAssertTrue("\(error)".contains("'--state-dir' (or 'stateDirectory' in the config file) is required"), "\(error)")
        }
    }

    func testTheBuiltInSimulatedBoardIsBoardSimulatedJSON() throws {
        let shipped = try BoardDescription.load(path: Self.repositoryRoot + "/board/simulated.json")
        XCTAssertEqual(try BoardDescription.parse(Array(SimulatedBoard.json.utf8)), shipped)
    }
}

// The effective settings of `carkey-agent run`: the config file, then flags on top, then the
// defaults of the mode (--simulate or not). Every problem is a UsageError (exit 2, one line)
// naming the flag or the config key.
#if canImport(Glibc)
import Glibc
#endif
import CommandLineKit
import Drivers
import Protocol

enum ConfigOverrides {
    static let defaultSimulatedVehicleID = "OCK-SIM-0001"

    /// Flags `run` accepts besides --state-dir and --vehicle (declared with the command).
    static let optionSpecs: [Option] = [
        .value("config", placeholder: "PATH", help: "Config file (default \(AgentConfig.defaultPath), if present)"),
        .value("board", placeholder: "FILE", help: "Board description (default in --simulate: the built-in simulated board)"),
        .value("console", placeholder: "TTY|pty|stdio|none", help: "Serial console (default in --simulate: pty, else none)"),
        .value("console-baud", placeholder: "BAUD", help: "Console baud rate (default 115200)"),
        .value("log-level", placeholder: "LEVEL", help: "debug, info, warn or error (default info)"),
    ]

    static func effectiveConfig(_ arguments: ParsedArguments, simulate: Bool) throws -> AgentConfig {
        var config = try fileConfig(arguments.value("config"))
        try apply(arguments, to: &config)
        try applyModeDefaults(&config, simulate: simulate)
        return config
    }

    /// --config PATH must exist; the default path is optional (a developer machine has none).
    private static func fileConfig(_ explicit: String?) throws -> AgentConfig {
        let path = explicit ?? AgentConfig.defaultPath
        if explicit == nil && access(path, F_OK) != 0 { return AgentConfig() }
        do {
            return try AgentConfig.load(path: path)
        } catch {
            throw UsageError("config \(path): \(error)")
        }
    }

    private static func apply(_ arguments: ParsedArguments, to config: inout AgentConfig) throws {
        if let directory = arguments.value("state-dir") {
            guard let resolved = ConfigPaths.resolve(directory, against: ".") else {
                throw UsageError.invalidValue(directory, for: "--state-dir", expected: "a directory path")
            }
            config.stateDirectory = resolved
        }
        if let id = arguments.value("vehicle") {
            guard let vehicleID = try? VehicleID(id) else {
                throw UsageError.invalidValue(id, for: "--vehicle", expected: "1 to 32 printable ASCII characters")
            }
            config.vehicleID = vehicleID
        }
        if let board = arguments.value("board") {
            guard let resolved = ConfigPaths.resolve(board, against: ".") else {
                throw UsageError.invalidValue(board, for: "--board", expected: "a board file path")
            }
            config.boardFile = resolved
        }
        if let console = arguments.value("console") {
            guard let device = ConsoleDevice(setting: console) else {
                throw UsageError.invalidValue(console, for: "--console", expected: ConsoleDevice.expectation)
            }
            config.consoleDevice = device
        }
        if let text = arguments.value("console-baud") {
            guard let baud = Int(text), SerialPort.supportedBaudRates.contains(baud) else {
                throw UsageError.invalidValue(text, for: "--console-baud", expected: ConsoleDevice.baudExpectation)
            }
            config.consoleBaud = baud
        }
        if let text = arguments.value("log-level") {
            guard let level = LogLevel(rawValue: text) else {
                throw UsageError.invalidValue(text, for: "--log-level", expected: LogLevel.expectation)
            }
            config.logLevel = level
        }
    }

    private static func applyModeDefaults(_ config: inout AgentConfig, simulate: Bool) throws {
        guard config.stateDirectory != nil else {
            throw UsageError(ConfigError.missing(key: "stateDirectory", flag: "--state-dir", why: "").description)
        }
        if config.vehicleID == nil {
            guard simulate else {
                throw UsageError(ConfigError.missing(key: "vehicleID", flag: "--vehicle", why: "without '--simulate'").description)
            }
            config.vehicleID = try? VehicleID(defaultSimulatedVehicleID)
        }
        if config.boardFile == nil && !simulate {
            throw UsageError(ConfigError.missing(key: "board", flag: "--board", why: "without '--simulate' (real GPIO needs a board file)").description)
        }
        if config.consoleDevice == nil {
            config.consoleDevice = simulate ? .pty : ConsoleDevice.none
        }
    }
}

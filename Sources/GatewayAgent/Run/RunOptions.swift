// `carkey-agent run` arguments, validated into typed values (usage errors name the option).
import CommandLineKit
import Protocol

struct RunOptions {
    static let defaultSimulatedVehicleID = ConfigOverrides.defaultSimulatedVehicleID
    static let socketFileName = "ble.sock"

    let stateDirectory: String
    let vehicleID: VehicleID
    let socketPath: String
    /// Owner keys enrolled in memory for the simulation (issue #4 replaces this).
    let simulatedOwners: [P256PublicKey]
    /// The cloud link, nil when the car runs offline.
    let cloud: CloudOptions?
    /// Simulated GPIO (and the simulation console commands) instead of libgpiod.
    let simulate: Bool
    /// The config file with flags applied (board, console, service PIN, log level).
    let config: AgentConfig

    init(_ arguments: ParsedArguments) throws {
        // Without --simulate the GPIO is real (libgpiod, the config's board file); phones still
        // connect over the Unix socket until the BLE radio link exists.
        simulate = arguments.flag("simulate")
        config = try ConfigOverrides.effectiveConfig(arguments, simulate: simulate)
        guard let directory = config.stateDirectory, let vehicleID = config.vehicleID else {
            throw UsageError("internal: effective config without state directory or vehicle ID")
        }
        stateDirectory = directory
        self.vehicleID = vehicleID
        socketPath = arguments.value("socket") ?? directory + "/" + Self.socketFileName
        cloud = try CloudOptions.parse(arguments)
        simulatedOwners = try arguments.values("simulate-owner").map { text in
            guard let bytes = Bytes(hex: text), bytes.count == P256PublicKey.sec1Length,
                  let key = try? P256PublicKey(sec1: bytes) else {
                throw UsageError.invalidValue(text.count <= 40 ? text : String(text.prefix(37)) + "...",
                                              for: "--simulate-owner", expected: "a SEC1 uncompressed P-256 public key (65 bytes hex)")
            }
            return key
        }
    }
}

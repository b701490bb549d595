// `carkey-agent run` arguments, validated into typed values (usage errors name the option).
import CommandLineKit
import Drivers
import Protocol

struct RunOptions {
    static let defaultSimulatedVehicleID = ConfigOverrides.defaultSimulatedVehicleID
    static let socketFileName = "ble.sock"

    let stateDirectory: String
    let vehicleID: VehicleID
    let socketPath: String
    /// Key slots, pairing window and clock synchronisation.
    let keys: KeysRunOptions
    /// The cloud link, nil when the car runs offline.
    let cloud: CloudOptions?
    /// Simulated GPIO (and the simulation console commands) instead of libgpiod.
    let simulate: Bool
    /// With --simulate: a simulated UWB module (register-level DW3000s on a simulated air).
    let simulateUWB: Bool
    /// The config file with flags applied (board, console, service PIN, log level).
    let config: AgentConfig
    /// The store's size and age budget ("store" in the config file, --store-* flags).
    let store: StoreBudget
    /// The phone link: the simulated Unix socket or Bluetooth LE (config "link", --ble).
    let link: LinkSettings
    /// Routine audit rows itemised per key per minute (AuditSettings).
    let auditRoutinePerMinute: Int
    /// `--conformance`: report every way a phone deviates from docs/protocol.md.
    let conformance: Bool

    init(_ arguments: ParsedArguments) throws {
        // Without --simulate the GPIO is real (libgpiod, the config's board file). The phone link
        // is its own choice (config "link", --ble): the VM lane runs simulated GPIO with BLE.
        simulate = arguments.flag("simulate")
        simulateUWB = arguments.flag("simulate-uwb")
        conformance = arguments.flag("conformance")
        if simulateUWB && !simulate { throw UsageError("--simulate-uwb needs --simulate (a real UWB module is set in the board file)") }
        config = try ConfigOverrides.effectiveConfig(arguments, simulate: simulate)
        guard let directory = config.stateDirectory, let vehicleID = config.vehicleID else {
            throw UsageError("internal: effective config without state directory or vehicle ID")
        }
        stateDirectory = directory
        self.vehicleID = vehicleID
        socketPath = arguments.value("socket") ?? directory + "/" + Self.socketFileName
        cloud = try CloudOptions.parse(arguments, file: config.cloud)
        try cloud?.checkTLSFilesReadable(arguments)
        keys = try KeysRunOptions.parse(arguments, simulate: simulate)
        store = try StoreSettings.parse(arguments, file: config.store)
        link = try LinkSettings.parse(arguments, file: config.link)
        auditRoutinePerMinute = try AuditSettings.parse(arguments, file: config.auditRoutinePerMinute)
    }
}

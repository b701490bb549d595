// The agent's settings: the config file (/etc/opencarkey/agent.json, or --config PATH), then
// command-line flags on top (ConfigOverrides). One type for every section, so a new one (the
// cloud link's "mqtt" object) is a key in `topLevelKeys`, a field here and a reader below.
//
// Relative paths in the file are relative to the file's folder, so an example config next to
// its board file works from any working directory.
import Drivers
import Protocol

struct AgentConfig: Equatable {
    static let defaultPath = "/etc/opencarkey/agent.json"
    /// Config files are small; the cap keeps a wrong path (a log, a device) from being slurped.
    static let maxFileBytes = 64 * 1024

    static let topLevelKeys: Set<String> = ["description", "vehicleID", "stateDirectory", "board", "logLevel", "console", "service", "mqtt", "store", "audit", "link", "proximity", "remote", "vault"]
    static let mqttKeys: Set<String> = ["url", "urls", "ca", "cert", "key", "keepaliveSeconds", "willDelaySeconds", "heartbeatSeconds"]
    static let consoleKeys: Set<String> = ["tty", "baud"]
    static let serviceKeys: Set<String> = ["pin", "pinEnabled", "timeoutSeconds", "challengeSeconds"]
    static let serviceTimeoutRange: ClosedRange<Int64> = 30...3600
    static let serviceChallengeRange: ClosedRange<Int64> = 5...Int64(ServiceChallenge.maxLifetimeSeconds)

    var vehicleID: VehicleID?
    var stateDirectory: String?
    /// The board description file; nil in --simulate means the built-in simulated board.
    var boardFile: String?
    var logLevel = LogLevel.info
    /// nil: the mode's default (a pty in --simulate, none otherwise).
    var consoleDevice: ConsoleDevice?
    var consoleBaud = SerialPort.defaultBaud
    /// The PIN way into service mode; nil: none. The signed challenge (`service challenge`)
    /// needs no setting: any owner key with manage, or fleet key, can sign it.
    var servicePIN: ServicePIN?
    /// `service.pinEnabled: false` keeps the PIN in the file but refuses it.
    var servicePINEnabled = true
    /// The PIN that is accepted now: set and enabled.
    var activeServicePIN: ServicePIN? { servicePINEnabled ? servicePIN : nil }
    var serviceTimeoutSeconds = 300
    /// How long a service challenge waits for its signed answer.
    var serviceChallengeSeconds = Int(ServiceChallenge.defaultLifetimeSeconds)
    /// The cloud link; nil: the car runs offline.
    var cloud: CloudOptions?
    /// The store's size and age budget (StoreSettings).
    var store = StoreBudget()
    /// Routine audit rows per key per minute (AuditSettings); nil: the default.
    var auditRoutinePerMinute: Int?
    /// The phone link (Unix-socket simulator or Bluetooth LE).
    var link = LinkSettings()
    /// What UWB distance decides (only with a UWB module).
    var proximity = ProximitySettings()
    /// Signed remote commands: policy and provisioned fleet keys (RemoteSettings).
    var remote = RemoteSettings()
    /// Where the storage key and the identity live (VaultSettings; absent: the file vault).
    var vault = VaultSettings.file
    /// The file the settings came from; nil when none was read.
    var sourcePath: String?

    /// Reads and validates a config file.
    static func load(path: String) throws(ConfigError) -> AgentConfig {
        let bytes: [UInt8]
        do {
            bytes = try Files.read(path, limit: maxFileBytes)
        } catch let error as Errno {
            throw .unreadable(path: path, reason: error.description)
        } catch {
            throw .unreadable(path: path, reason: "\(error)")
        }
        var config = try parse(bytes, baseDirectory: ConfigPaths.directory(of: path))
        config.sourcePath = path
        return config
    }

    /// Validates config-file JSON. Every error names the key it is about.
    static func parse(_ bytes: [UInt8], baseDirectory: String) throws(ConfigError) -> AgentConfig {
        guard bytes.count <= maxFileBytes else { throw .malformedJSON(reason: "larger than \(maxFileBytes) bytes") }
        let top = try ConfigReader(try ConfigJSON.parseConfig(bytes), at: "", allowed: topLevelKeys)
        var config = AgentConfig()
        _ = try top.string("description")
        config.vehicleID = try top.string("vehicleID", expected: "1 to 32 printable ASCII characters") { try? VehicleID($0) }
        config.stateDirectory = try top.string("stateDirectory", expected: "a directory path") {
            ConfigPaths.resolve($0, against: baseDirectory)
        }
        config.boardFile = try top.string("board", expected: "a board file path (see board/README.md)") {
            ConfigPaths.resolve($0, against: baseDirectory)
        }
        if let level = try top.string("logLevel", expected: LogLevel.expectation, LogLevel.init(rawValue:)) {
            config.logLevel = level
        }
        if let console = try top.object("console", allowed: consoleKeys) {
            try config.readConsole(console)
        }
        if let service = try top.object("service", allowed: serviceKeys) {
            try config.readService(service)
        }
        if let mqtt = try top.object("mqtt", allowed: mqttKeys) {
            config.cloud = try CloudOptions.read(mqtt, baseDirectory: baseDirectory)
        }
        if let store = try top.object("store", allowed: StoreSettings.keys) {
            config.store = try StoreSettings.read(store)
        }
        if let proximity = try top.object("proximity", allowed: ProximitySettings.keys) {
            config.proximity = try ProximitySettings.read(proximity)
        }
        if let link = try top.object("link", allowed: LinkSettings.keys) {
            config.link = try LinkSettings.read(link)
        }
        if let remote = try top.object("remote", allowed: RemoteSettings.keys) {
            config.remote = try RemoteSettings.read(remote)
        }
        if let vault = try top.object("vault", allowed: VaultSettings.keys) {
            config.vault = try VaultSettings.read(vault, baseDirectory: baseDirectory)
        }
        if let audit = try top.object("audit", allowed: AuditSettings.keys) {
            config.auditRoutinePerMinute = try AuditSettings.read(audit)
        }
        return config
    }

    private mutating func readConsole(_ console: ConfigReader) throws(ConfigError) {
        consoleDevice = try console.string("tty", expected: ConsoleDevice.expectation, ConsoleDevice.init(setting:))
        if let baud = try console.integer("baud", in: 1...4_000_000, expected: ConsoleDevice.baudExpectation) {
            guard SerialPort.supportedBaudRates.contains(baud) else {
                throw .invalidValue(key: console.key("baud"), expected: ConsoleDevice.baudExpectation)
            }
            consoleBaud = baud
        }
    }

    private mutating func readService(_ service: ConfigReader) throws(ConfigError) {
        servicePIN = try service.string("pin", expected: ServicePIN.expectation, ServicePIN.init(text:))
        if service.has("pinEnabled") {
            guard case .bool(let on)? = service.fields["pinEnabled"] else {
                throw .invalidValue(key: service.key("pinEnabled"), expected: "true or false")
            }
            servicePINEnabled = on
        }
        serviceTimeoutSeconds = try service.integer("timeoutSeconds", in: Self.serviceTimeoutRange) ?? serviceTimeoutSeconds
        serviceChallengeSeconds = try service.integer("challengeSeconds", in: Self.serviceChallengeRange) ?? serviceChallengeSeconds
    }
}

// The config file's "remote" object: the car owner's policy for signed remote commands
// (docs/cloud.md "Remote commands"). Who may sign is decided by keys, not here; these knobs only
// narrow what a correctly signed command may do.
//
// allowUnlock defaults to false: unlocking from anywhere in the world is the one remote action
// whose misuse opens the car, so an installation opts in (car sharing, fleets). Lock, trunk,
// status and report are allowed by default (trunk still needs the signer's trunk permission).
import Drivers
import Protocol

struct RemoteSettings: Equatable {
    static let keys: Set<String> = ["allowUnlock", "autoRelockSeconds", "refuseDuringServiceMode", "fleetKeys"]
    /// 0 turns auto-relock off.
    static let autoRelockRange: ClosedRange<Int64> = 0...3600
    static let maxFleetKeys = 8

    var allowUnlock = false
    /// Car-sharing convention: after a remote unlock, lock again if no door opened within this.
    var autoRelockSeconds = 0
    var refuseDuringServiceMode = true
    /// Fleet operators' public keys installed at provisioning (SEC1 uncompressed, hex).
    var fleetKeys: [P256PublicKey] = []

    static func == (lhs: RemoteSettings, rhs: RemoteSettings) -> Bool {
        lhs.allowUnlock == rhs.allowUnlock && lhs.autoRelockSeconds == rhs.autoRelockSeconds
            && lhs.refuseDuringServiceMode == rhs.refuseDuringServiceMode && lhs.fleetKeys.map(\.sec1) == rhs.fleetKeys.map(\.sec1)
    }

    static func read(_ object: ConfigReader) throws(ConfigError) -> RemoteSettings {
        var settings = RemoteSettings()
        settings.allowUnlock = try bool(object, "allowUnlock") ?? settings.allowUnlock
        settings.refuseDuringServiceMode = try bool(object, "refuseDuringServiceMode") ?? settings.refuseDuringServiceMode
        settings.autoRelockSeconds = try object.integer("autoRelockSeconds", in: autoRelockRange) ?? settings.autoRelockSeconds
        if let value = object.fields["fleetKeys"] {
            let expected = "an array of at most \(maxFleetKeys) P-256 public keys (SEC1 uncompressed, hex)"
            guard case .array(let items) = value, items.count <= maxFleetKeys else {
                throw .invalidValue(key: object.key("fleetKeys"), expected: expected)
            }
            for item in items {
                guard case .string(let hex) = item, let bytes = Bytes(hex: hex), let key = try? P256PublicKey(sec1: bytes) else {
                    throw .invalidValue(key: object.key("fleetKeys"), expected: expected)
                }
                settings.fleetKeys.append(key)
            }
        }
        return settings
    }

    private static func bool(_ object: ConfigReader, _ name: String) throws(ConfigError) -> Bool? {
        guard object.has(name) else { return nil }
        guard case .bool(let on)? = object.fields[name] else { throw .invalidValue(key: object.key(name), expected: "true or false") }
        return on
    }
}

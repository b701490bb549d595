// Which keys of agent.json the cloud may set (docs/cloud.md "Configuration (desired/reported)").
// Default deny: a key that is neither managed nor forbidden by name is still refused, so a
// key added to the schema later is never cloud-writable by accident.
//
// Forbidden, and why:
// - vehicleID, stateDirectory, board: the car's identity, where its keys and database live, and
//   which pins move the locks (pulse lengths included: they are in the board file);
// - service: the service PIN and service mode (local actuation);
// - console: a serial console on a device of the cloud's choice;
// - store: the audit log's size and age budget (shrinking it destroys local evidence);
// - mqtt.url, mqtt.ca, mqtt.cert, mqtt.key: moving the car to another broker or trust anchor;
// - link.transport, link.adapter, link.name, link.privacy: the phone link itself and the
//   advertising privacy (a per-car name or privacy off makes the car trackable);
// - remote.fleetKeys: signing keys (a config document must never enrol its own signers);
// - remote.refuseDuringServiceMode: a safety interlock for someone working on the car;
// - keys, pairing, signers, fleetKeys, signatureChecks: reserved names for key material,
//   pairing rules and signature checks, should they ever appear in the file.
import Drivers
import Protocol

enum ConfigKeyPolicy {
    /// Dotted keys (a whole object when no dot) the cloud may set. The document is the full
    /// desired state of these: one it omits goes back to the default.
    static let managed: [String] = ManagedConfigKeys.all

    static let forbidden: [String] = [
        "vehicleID", "stateDirectory", "board", "service", "console", "store",
        "mqtt.url", "mqtt.ca", "mqtt.cert", "mqtt.key",
        "link.transport", "link.adapter", "link.name", "link.privacy",
        "remote.fleetKeys", "remote.refuseDuringServiceMode",
        "keys", "pairing", "signers", "fleetKeys", "signatureChecks",
    ]

    /// `key` equals `entry` or lies inside it ("proximity.validRounds" inside "proximity").
    static func covers(_ entry: String, _ key: String) -> Bool { ManagedConfigKeys.covers(entry, key) }

    static func isManaged(_ key: String) -> Bool { managed.contains { covers($0, key) } }
    static func isForbidden(_ key: String) -> Bool { forbidden.contains { covers($0, key) } }

    /// Every leaf key of a document ("proximity.validRounds"); an empty object is a leaf too.
    static func leafKeys(_ tree: JSONTree, prefix: String = "") -> [String] {
        guard case .object(let fields) = tree, !fields.isEmpty else { return prefix.isEmpty ? [] : [prefix] }
        return fields.keys.sorted().flatMap { leafKeys(fields[$0]!, prefix: ConfigReader.join(prefix, $0)) }
    }

    /// The first forbidden key the document names, then the first it may not set; nil if none.
    /// Sorted, so the key reported does not depend on dictionary order.
    static func firstForbidden(in document: JSONTree) -> String? {
        let keys = leafKeys(document)
        if let named = keys.first(where: isForbidden) { return named }
        // A key outside the schema is left to the schema check (it names it as unknown); a
        // schema key the cloud does not manage is refused here.
        return keys.first { !isManaged($0) && isSchemaKey($0) }
    }

    /// Whether the config schema knows `key` (top level, or inside a known section).
    static func isSchemaKey(_ key: String) -> Bool {
        let parts = key.split(separator: ".", maxSplits: 1).map(String.init)
        guard AgentConfig.topLevelKeys.contains(parts[0]) else { return false }
        guard parts.count == 2 else { return true }
        let section: Set<String>? = switch parts[0] {
        case "mqtt": AgentConfig.mqttKeys
        case "console": AgentConfig.consoleKeys
        case "service": AgentConfig.serviceKeys
        case "store": StoreSettings.keys
        case "audit": AuditSettings.keys
        case "link": LinkSettings.keys
        case "proximity": ProximitySettings.keys
        case "remote": RemoteSettings.keys
        default: nil
        }
        return section.map { $0.contains(parts[1]) } ?? true
    }
}

// The keys of agent.json a signed configuration document sets (docs/cloud.md "Content: the
// cloud-managed keys"). One list for the car, which applies documents, and for `carkey config
// sign`, which tells the signer what a document resets: the document is the complete desired
// state of these keys, so one it leaves out goes back to its default on the car.

public enum ManagedConfigKeys {
    /// Dotted keys; an entry without a dot is a whole object ("proximity": all of it).
    public static let all: [String] = [
        "description", "logLevel", "mqtt.keepaliveSeconds", "mqtt.willDelaySeconds", "proximity", "audit",
        "link.maxLinks", "link.idleTimeoutSeconds", "link.identifierRotationMinutes",
        "remote.allowUnlock", "remote.autoRelockSeconds",
    ]

    /// `key` equals `entry` or lies inside it ("proximity.validRounds" inside "proximity").
    public static func covers(_ entry: String, _ key: String) -> Bool {
        key == entry || key.hasPrefix(entry + ".")
    }

    /// The managed entries a document with these dotted leaf keys does not name at all: the car
    /// sets each of them back to its default when it applies the document.
    public static func reset(byDocumentWith leafKeys: [String]) -> [String] {
        all.filter { entry in !leafKeys.contains { covers(entry, $0) || covers($0, entry) } }
    }
}

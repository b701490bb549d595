// How a new config reaches the running agent without a restart. The lead wires one handler
// per part that can change live; a changed key no handler covers takes effect at the next
// start, and the reported document says which is which.

struct LiveSettingHandler {
    /// Dotted keys (or whole objects) this handler applies ("proximity", "mqtt.keepaliveSeconds").
    let keys: [String]
    /// Applies the parts of `config` it covers; throws if the running part refused them.
    let apply: (AgentConfig) throws -> Void
}

struct LiveSettings {
    var handlers: [LiveSettingHandler]

    /// The log level needs no wiring: it is one process-wide setting.
    static var logLevel: LiveSettingHandler { LiveSettingHandler(keys: ["logLevel"]) { LogLevel.threshold = $0.logLevel } }

    init(_ handlers: [LiveSettingHandler] = []) { self.handlers = [Self.logLevel] + handlers }

    func covers(_ key: String) -> Bool {
        handlers.contains { $0.keys.contains { ConfigKeyPolicy.covers($0, key) } }
    }

    /// Runs the handlers whose keys changed; returns the changed keys split by when they apply.
    func apply(_ config: AgentConfig, changed: [String]) throws -> (live: [String], atNextStart: [String]) {
        for handler in handlers where changed.contains(where: { key in handler.keys.contains { ConfigKeyPolicy.covers($0, key) } }) {
            try handler.apply(config)
        }
        return (changed.filter(covers), changed.filter { !covers($0) })
    }
}

/// Checks run after a new config is in force; any failure rolls it back. Each returns nil when
/// healthy, or a short reason (no secrets). They run on the agent's thread: a check that waits
/// (the cloud link reconnecting) must bound its own wait.
struct ConfigHealthCheck {
    let name: String
    let run: () -> String?
}

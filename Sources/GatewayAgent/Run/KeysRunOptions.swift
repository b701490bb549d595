// `carkey-agent run` options for keys and trusted time (and, later, the config file's "keys"
// object). Usage errors name the option.
import CommandLineKit
import Protocol

struct KeysRunOptions: Equatable {
    /// Where the agent learns whether the system clock is synchronised.
    enum ClockSync: String, Equatable {
        /// adjtimex(2): what the kernel says (the only choice outside simulation).
        case kernel
        /// Simulation and tests: believe the system clock is / is not NTP-synchronised.
        case yes, no
    }

    var keySlots = Keychain.defaultCapacity
    var pairingWindowSeconds = 60
    var clockSync = ClockSync.kernel

    static let optionSpecs: [Option] = [
        .value("key-slots", placeholder: "N", help: "Key slots, owner and shared keys together (default \(Keychain.defaultCapacity))"),
        .value("pairing-window-seconds", placeholder: "SECONDS",
               help: "Pairing window length (default 60; simulation and tests only)"),
        .value("clock-sync", placeholder: "kernel|yes|no",
               help: "Is the system clock NTP-synchronised: ask the kernel (default), or assume yes/no (simulation and tests only)"),
    ]

    /// `simulate`: the two test-only options need --simulate.
    static func parse(_ arguments: ParsedArguments, simulate: Bool) throws -> KeysRunOptions {
        if !simulate {
            for name in ["pairing-window-seconds", "clock-sync"] where arguments.value(name) != nil {
                throw UsageError("'--\(name)' is for simulation and tests only (needs '--simulate')")
            }
        }
        var options = KeysRunOptions()
        if let slots = try arguments.integer("key-slots") {
            guard (1...1024).contains(slots) else {
                throw UsageError.invalidValue(String(slots), for: "--key-slots", expected: "1 to 1024")
            }
            options.keySlots = slots
        }
        if let seconds = try arguments.integer("pairing-window-seconds") {
            guard (1...600).contains(seconds) else {
                throw UsageError.invalidValue(String(seconds), for: "--pairing-window-seconds", expected: "1 to 600")
            }
            options.pairingWindowSeconds = seconds
        }
        if let text = arguments.value("clock-sync") {
            guard let sync = ClockSync(rawValue: text) else {
                throw UsageError.invalidValue(String(text.prefix(20)), for: "--clock-sync", expected: "kernel, yes or no")
            }
            options.clockSync = sync
        }
        return options
    }

    /// The engine's tunables with the pairing window length.
    func engineConfiguration(vehicleID: VehicleID) -> CarProtocolConfiguration {
        var configuration = CarProtocolConfiguration(vehicleID: vehicleID)
        configuration.pairing = PairingPolicy(windowMillis: UInt64(pairingWindowSeconds) * 1000)
        return configuration
    }

    /// The probe AgentClock asks on every sample.
    var syncProbe: AgentClock.SyncProbe {
        switch clockSync {
        case .kernel: return AgentClock.kernelSynchronized
        case .yes: return { true }
        case .no: return { false }
        }
    }
}

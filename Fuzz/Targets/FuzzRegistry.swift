// Every target by name. Agent-side targets (config, console) live with the agent's sources
// (Fuzz/Agent) and are registered by the agent fuzz build and GatewayAgentTests.
import Protocol

public enum FuzzRegistry {
    public static let all: [FuzzTarget] = MessageTargets.all + RecordTargets.all + KeyTargets.all
        + TransportTargets.all + FileTargets.all + MQTTTargets.all + UWBTargets.all + StoreTargets.all
        + CarSessionTargets.all + TPM2Targets.all + VaultTargets.all

    public static func target(named name: String, in targets: [FuzzTarget] = all) -> FuzzTarget? {
        targets.first { $0.name == name }
    }
}

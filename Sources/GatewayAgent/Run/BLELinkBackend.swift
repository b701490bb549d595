// The Bluetooth LE phone link: refuses to start next to bluetoothd, then opens the BlueZ link
// server (management socket, advertising, the ATT listener) with the car's advertising key.
import Drivers
import Protocol

enum BLELinkBackend {
    static func open(_ options: RunOptions, store: CarStore, clock: AgentClock, log: AgentLog) throws -> any LinkServer {
        throw AgentStartFailure(description: "the Bluetooth LE link is not built into this agent yet")
    }
}

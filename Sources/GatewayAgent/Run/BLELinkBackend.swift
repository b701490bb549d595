// The Bluetooth LE phone link: refuses to start next to bluetoothd, then opens the BlueZ link
// server (management socket, advertising with the car's rotating identifier, the ATT
// listener). Failures here stop the agent at start-up with one line that says what to fix.
import Drivers
import Protocol

enum BLELinkBackend {
    static func open(_ options: RunOptions, store: CarStore, clock: AgentClock, log: AgentLog) throws -> any LinkServer {
        let settings = options.link
        do throws(BluetoothdConflict) { try BluetoothdDetector().check() } catch {
            throw AgentStartFailure(description: error.description)
        }
        guard let selector = AdapterSelector(settings.adapter) else {
            throw AgentStartFailure(description: "link.adapter '\(settings.adapter)' is not an adapter name")
        }
        var configuration = BlueZLinkServer.Configuration(adapter: try selection(selector), name: settings.name)
        configuration.maxLinks = settings.maxLinks
        configuration.spareSlots = 1  // CarService reclaims a slot without a session
        configuration.idleTimeoutMillis = UInt64(settings.idleTimeoutSeconds) * 1000
        configuration.privacy = settings.privacy
        let key = try store.loadOrCreateAdvertisingKey()
        do {
            return try BlueZLinkServer(configuration: configuration, advertisingKey: key,
                                       rotationMillis: UInt64(settings.identifierRotationMinutes) * 60_000)
        } catch {
            throw AgentStartFailure(description: "Bluetooth LE on \(settings.adapter): \(error)")
        }
    }

    private static func selection(_ selector: AdapterSelector) throws -> AdapterConfiguration.Selection {
        switch selector {
        case .index(let index): return .index(index)
        case .address(let text):
            guard let address = BluetoothAddress(text) else {
                throw AgentStartFailure(description: "link.adapter '\(text)' is not a Bluetooth address")
            }
            return .address(address)
        }
    }
}

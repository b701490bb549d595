// Opens the phone link the settings ask for: the Unix-socket simulator or Bluetooth LE through
// BlueZ. The rest of the agent sees only `LinkServer`.
import Drivers
import Protocol

enum LinkBackend {
    static func open(_ options: RunOptions, store: CarStore, clock: AgentClock, log: AgentLog) throws -> any LinkServer {
        switch options.link.transport {
        case .unix:
            var configuration = SimulatedLinkServer.Configuration(socketPath: options.socketPath)
            // CarService reclaims a slot without a session for each newcomer (issue 14).
            configuration.spareSlots = 1
            return try SimulatedLinkServer(configuration: configuration)
        case .ble:
            return try BLELinkBackend.open(options, store: store, clock: clock, log: log)
        }
    }

    /// The start-up line that says where phones reach the car (tests and scripts read it).
    static func startupLine(_ server: any LinkServer, options: RunOptions) -> String {
        switch options.link.transport {
        case .unix: return "simulated car \(options.vehicleID) listening on \(options.socketPath)"
        case .ble: return "car \(options.vehicleID) on Bluetooth LE: \(server.endpointDescription)"
        }
    }
}

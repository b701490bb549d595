// Opens the phone's link to the car for one visit.
import Drivers
import Protocol

extension PhoneTransport {
    func connect(options: PhoneOptions) throws -> any PhoneLink {
        switch self {
        case .unix(let path):
            return try SimulatedLinkClient(socketPath: path, timeoutMillis: options.timeoutMillis)
        case .ble:
            throw PhoneExchangeFailure(description: "Bluetooth LE is not built into this tool yet")
        }
    }
}

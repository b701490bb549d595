// Opens the phone's link to the car for one visit, and says how it went (stderr, so the
// result lines on stdout stay the same for every transport).
import CommandLineKit
import Drivers
import Protocol

extension PhoneTransport {
    func connect(options: PhoneOptions) throws -> any PhoneLink {
        switch self {
        case .unix(let path):
            return try SimulatedLinkClient(socketPath: path, timeoutMillis: options.timeoutMillis)
        case .ble(let adapter, let target):
            guard let index = Self.adapterIndex(adapter) else { throw PhoneExchangeFailure(description: "no adapter '\(adapter)'") }
            let car: (BluetoothAddress, BluetoothAddressType)
            switch target {
            case .address(let text):
                guard let address = BluetoothAddress(text) else { throw PhoneExchangeFailure(description: "'\(text)' is not an address") }
                // A car's identity address is public on the boards we ship; --car is for labs.
                car = (address, .lePublic)
            case .scan:
                // Enrollment has no key yet: the first car advertising the key service. A scan
                // pins one car (PairedCars.resolve asks for --vehicle when the file pins several).
                let key = options.cars.first?.advertisingKey
                let found = try BLEPhoneLink.scan(index: index, timeoutMillis: options.scanTimeoutMillis, advertisingKey: key)
                note("found \(found.address) (\(found.addressType)) after \(found.foundAfterMillis) ms"
                     + (found.identified ? ", rotating identifier resolved with the car's key" : ", by the key service UUID")
                     + (found.rssi.map { ", rssi \($0) dBm" } ?? ""))
                car = (found.address, found.addressType)
            }
            let link = try BLEPhoneLink(index: index, car: car.0, carType: car.1, timeoutMillis: options.timeoutMillis)
            note("connected in \(link.connectMillis) ms, GATT ready in \(link.setupMillis) ms, MTU \(link.mtu)")
            return link
        }
    }

    private func note(_ line: String) {
        writeStderr("carkey phone: ble: \(line)\n")
    }
}

// `carkey phone`'s way to the car: `--connect unix:PATH` (the simulated link of
// `carkey-agent run --simulate`) or `--ble ADAPTER` with `--car ADDRESS` or `--scan` (a real
// Bluetooth LE link through BlueZ: scan for the key service, connect, GATT, subscribe).
import CommandLineKit
import Drivers
import Protocol

enum PhoneTransport: Equatable {
    /// Which car to connect to over BLE.
    enum BLETarget: Equatable {
        /// A known address (the car's identity address, e.g. from its console or a lab setup).
        case address(String)
        /// Scan for the key service; with the car's advertising key (saved at enrollment) take
        /// only the car whose rotating identifier resolves, else the first car advertising it.
        case scan
    }

    case unix(path: String)
    /// `adapter`: "hci1" or "1".
    case ble(adapter: String, target: BLETarget)

    static let optionSpecs: [Option] = [
        .value("connect", placeholder: "unix:PATH", help: "The car's simulated link socket"),
        .value("ble", placeholder: "ADAPTER", help: "Reach the car over Bluetooth LE on this adapter (hci1, or 1)"),
        .value("car", placeholder: "ADDRESS", help: "--ble: the car's Bluetooth address (AA:BB:CC:DD:EE:FF)"),
        .flag("scan", help: "--ble: scan for the car's key service (and its rotating identifier)"),
        .value("scan-timeout", placeholder: "SECONDS", help: "--ble --scan: how long to look for the car (default 10)"),
    ]

    static func parse(_ arguments: ParsedArguments) throws -> PhoneTransport {
        let connect = arguments.value("connect")
        guard let adapter = arguments.value("ble") else {
            for option in ["car", "scan-timeout"] where arguments.value(option) != nil {
                throw UsageError("'--\(option)' goes with --ble")
            }
            guard !arguments.flag("scan") else { throw UsageError("'--scan' goes with --ble") }
            guard let connect else { throw UsageError("give --connect unix:PATH or --ble ADAPTER") }
            guard connect.hasPrefix("unix:"), connect.count > 5 else {
                throw UsageError.invalidValue(connect, for: "--connect", expected: "unix:PATH")
            }
            return .unix(path: String(connect.dropFirst(5)))
        }
        guard connect == nil else { throw UsageError("'--connect' and '--ble' exclude each other") }
        guard Self.adapterIndex(adapter) != nil else {
            throw UsageError.invalidValue(adapter, for: "--ble", expected: "an adapter such as hci1 or 1")
        }
        switch (arguments.value("car"), arguments.flag("scan")) {
        case (let address?, false):
            guard BluetoothAddress(address) != nil else {
                throw UsageError.invalidValue(address, for: "--car", expected: "a Bluetooth address AA:BB:CC:DD:EE:FF")
            }
            return .ble(adapter: adapter, target: .address(address))
        case (nil, true):
            return .ble(adapter: adapter, target: .scan)
        default:
            throw UsageError("--ble needs exactly one of --car ADDRESS and --scan")
        }
    }

    var isBLE: Bool {
        if case .ble = self { return true }
        return false
    }

    /// "hci1" or "1" -> 1.
    static func adapterIndex(_ text: String) -> UInt16? {
        let digits = text.hasPrefix("hci") ? String(text.dropFirst(3)) : text
        guard !digits.isEmpty, digits.count <= 5, digits.allSatisfy(\.isASCII), let value = UInt16(digits), value < 0xFFFF else { return nil }
        return value
    }
}

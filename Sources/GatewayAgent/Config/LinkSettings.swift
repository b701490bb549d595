// The phone link's settings: the config file's "link" object, then flags on top. "unix" is the
// simulated link (a Unix socket, `make run` and fast tests); "ble" is Bluetooth LE through
// BlueZ's management API with the agent's own GATT server (docs/protocol.md, "Bluetooth LE
// transport"; board/README.md for bringing a controller up without bluetoothd).
import CommandLineKit
import Drivers

struct LinkSettings: Equatable {
    enum Transport: String, Equatable { case unix, ble }

    static let keys: Set<String> = ["transport", "adapter", "name", "maxLinks", "idleTimeoutSeconds", "privacy", "identifierRotationMinutes", "handshakeDeadlineSeconds"]
    static let maxLinksRange: ClosedRange<Int64> = 1...8
    static let idleRange: ClosedRange<Int64> = 5...3600
    static let rotationRange: ClosedRange<Int64> = 1...60
    static let handshakeDeadlineRange: ClosedRange<Int64> = 1...60
    /// The advertised name is the same for every car by default: a VIN or plate here would be
    /// the fixed, trackable identity the rotating identifier exists to avoid.
    static let defaultName = "OpenCarKey"
    /// BLE local names fit the scan response with room to spare at this length.
    static let maxNameBytes = 20

    var transport = Transport.unix
    /// "hci0", "0" or the controller's address AA:BB:CC:DD:EE:FF.
    var adapter = "hci0"
    var name = defaultName
    /// Phones connected at once over BLE (the Unix socket keeps its 8).
    var maxLinks = 4
    /// A BLE link with nothing from the phone for this long is closed: the controller does not
    /// always report a phone that vanished (a supervision timeout needs the radio to notice).
    var idleTimeoutSeconds = 60
    /// Resolvable private addresses for the controller (mgmt Set Privacy).
    var privacy = true
    var identifierRotationMinutes = 15
    /// A link (either transport) without a session this long after it connected is closed, so
    /// connections that say nothing cannot hold the slots. A phone needs well under a second.
    var handshakeDeadlineSeconds = 3

    static let optionSpecs: [Option] = [
        .value("ble", placeholder: "ADAPTER",
               help: "Serve phones over Bluetooth LE on this adapter (hci0, 0 or its address); config link.transport \"ble\""),
    ]

    static func read(_ link: ConfigReader) throws(ConfigError) -> LinkSettings {
        var settings = LinkSettings()
        if let transport = try link.string("transport", expected: "\"unix\" or \"ble\"", Transport.init(rawValue:)) {
            settings.transport = transport
        }
        if let adapter = try link.string("adapter", expected: "hci0, an index or a Bluetooth address", { validAdapter($0) ? $0 : nil }) {
            settings.adapter = adapter
        }
        if let name = try link.string("name", expected: "1 to \(maxNameBytes) printable ASCII characters", { validName($0) ? $0 : nil }) {
            settings.name = name
        }
        settings.maxLinks = try link.integer("maxLinks", in: maxLinksRange) ?? settings.maxLinks
        settings.idleTimeoutSeconds = try link.integer("idleTimeoutSeconds", in: idleRange) ?? settings.idleTimeoutSeconds
        if link.has("privacy") {
            guard case .bool(let on)? = link.fields["privacy"] else { throw .invalidValue(key: link.key("privacy"), expected: "true or false") }
            settings.privacy = on
        }
        settings.identifierRotationMinutes = try link.integer("identifierRotationMinutes", in: rotationRange) ?? settings.identifierRotationMinutes
        settings.handshakeDeadlineSeconds = try link.integer("handshakeDeadlineSeconds", in: handshakeDeadlineRange)
            ?? settings.handshakeDeadlineSeconds
        return settings
    }

    /// The file's settings with the flags applied (`--ble ADAPTER` selects BLE).
    static func parse(_ arguments: ParsedArguments, file: LinkSettings) throws -> LinkSettings {
        var settings = file
        if let adapter = arguments.value("ble") {
            guard validAdapter(adapter) else {
                throw UsageError.invalidValue(adapter, for: "--ble", expected: "hci0, an index or a Bluetooth address")
            }
            settings.transport = .ble
            settings.adapter = adapter
        }
        return settings
    }

    static func validAdapter(_ text: String) -> Bool {
        AdapterSelector(text) != nil
    }

    static func validName(_ text: String) -> Bool {
        !text.isEmpty && text.utf8.count <= maxNameBytes && text.utf8.allSatisfy { (0x20...0x7E).contains($0) }
    }

    func displayLines() -> [String] {
        guard transport == .ble else { return ["link.transport: unix (simulated link)"] }
        return [
            "link.transport: ble, adapter \(adapter), name \"\(name)\", maxLinks \(maxLinks)",
            "link.idleTimeoutSeconds: \(idleTimeoutSeconds), privacy \(privacy ? "on" : "off"), identifierRotationMinutes \(identifierRotationMinutes)",
        ]
    }
}

/// An adapter named by index ("hci0", "0") or by its address.
enum AdapterSelector: Equatable {
    case index(UInt16)
    case address(String)

    init?(_ text: String) {
        let digits = text.hasPrefix("hci") ? String(text.dropFirst(3)) : text
        if !digits.isEmpty, digits.count <= 5, digits.utf8.allSatisfy({ (0x30...0x39).contains($0) }), let value = UInt16(digits), value < 0xFFFF {
            self = .index(value)
            return
        }
        let parts = text.split(separator: ":", omittingEmptySubsequences: false)
        guard parts.count == 6, parts.allSatisfy({ $0.count == 2 && UInt8($0, radix: 16) != nil }) else { return nil }
        self = .address(text.uppercased())
    }
}

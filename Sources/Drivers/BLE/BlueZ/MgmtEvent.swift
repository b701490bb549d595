// Parsing of the management events this gateway reacts to. Every field read is bounds-checked;
// events with codes we do not use parse to nil and are skipped, never reported as errors.

public struct MgmtEvent: Equatable, Sendable {
    public let controllerIndex: UInt16
    public let body: Body

    public init(controllerIndex: UInt16, body: Body) {
        self.controllerIndex = controllerIndex
        self.body = body
    }

    public enum Body: Equatable, Sendable {
        /// `opcode` stays raw: a reply to a command another process sent may carry any opcode.
        case commandComplete(opcode: UInt16, status: MgmtStatus, returnParameters: [UInt8])
        case commandStatus(opcode: UInt16, status: MgmtStatus)
        case controllerError(code: UInt8)
        case indexAdded
        case indexRemoved
        case newSettings(MgmtSettings)
        case deviceConnected(address: BluetoothAddress, type: BluetoothAddressType, flags: UInt32, eir: [UInt8])
        case deviceDisconnected(address: BluetoothAddress, type: BluetoothAddressType, reason: MgmtDisconnectReason)
        case deviceFound(MgmtDeviceFound)
        case discovering(addressTypes: UInt8, active: Bool)
        case advertisingAdded(instance: UInt8)
        case advertisingRemoved(instance: UInt8)
    }

    /// Parses one whole packet as read from the control socket; nil for an event code we do not use.
    public static func parse(_ packet: [UInt8]) throws(MgmtError) -> MgmtEvent? {
        var header = MgmtReader(packet[...], what: "event header")
        let code = try header.u16(), index = try header.u16(), length = Int(try header.u16())
        guard header.remaining == length else { throw .lengthMismatch(declared: length, actual: header.remaining) }
        guard let known = MgmtEventCode(rawValue: code) else { return nil }
        var r = MgmtReader(packet[6...], what: "\(known) event")
        let body: Body
        switch known {
        case .commandComplete:
            body = .commandComplete(opcode: try r.u16(), status: MgmtStatus(rawValue: try r.u8()), returnParameters: r.rest())
        case .commandStatus:
            body = .commandStatus(opcode: try r.u16(), status: MgmtStatus(rawValue: try r.u8()))
        case .controllerError:
            body = .controllerError(code: try r.u8())
        case .indexAdded:
            body = .indexAdded
        case .indexRemoved:
            body = .indexRemoved
        case .newSettings:
            body = .newSettings(MgmtSettings(rawValue: try r.u32()))
        case .deviceConnected:
            let address = try r.address(), type = try r.addressType(), flags = try r.u32()
            let eirLength = Int(try r.u16())
            body = .deviceConnected(address: address, type: type, flags: flags, eir: try r.take(eirLength))
        case .deviceDisconnected:
            body = .deviceDisconnected(address: try r.address(), type: try r.addressType(),
                                       reason: MgmtDisconnectReason(rawValue: try r.u8()))
        case .deviceFound:
            let address = try r.address(), type = try r.addressType()
            let rssi = Int8(bitPattern: try r.u8()), flags = try r.u32()
            let eirLength = Int(try r.u16())
            body = .deviceFound(MgmtDeviceFound(address: address, addressType: type, rssi: rssi, flags: flags,
                                                eir: try r.take(eirLength)))
        case .discovering:
            body = .discovering(addressTypes: try r.u8(), active: try r.u8() != 0)
        case .advertisingAdded:
            body = .advertisingAdded(instance: try r.u8())
        case .advertisingRemoved:
            body = .advertisingRemoved(instance: try r.u8())
        }
        return MgmtEvent(controllerIndex: index, body: body)
    }
}

/// Device Disconnected reasons (mgmt-api.txt): 1 is a supervision timeout (link loss), 3 the
/// remote side hanging up.
public struct MgmtDisconnectReason: RawRepresentable, Hashable, Sendable {
    public let rawValue: UInt8
    public init(rawValue: UInt8) { self.rawValue = rawValue }

    public static let unspecified = MgmtDisconnectReason(rawValue: 0)
    public static let connectionTimeout = MgmtDisconnectReason(rawValue: 1)
    public static let terminatedByLocalHost = MgmtDisconnectReason(rawValue: 2)
    public static let terminatedByRemoteHost = MgmtDisconnectReason(rawValue: 3)
    public static let authenticationFailure = MgmtDisconnectReason(rawValue: 4)
    public static let suspend = MgmtDisconnectReason(rawValue: 5)
}

/// One Device Found event: an advertisement (possibly merged with its scan response by the kernel).
public struct MgmtDeviceFound: Equatable, Sendable {
    public let address: BluetoothAddress
    public let addressType: BluetoothAddressType
    /// dBm; 127 means "not available" (btvirt always reports 127 here).
    public let rssi: Int8
    public let flags: UInt32
    /// The AD structures, in the same length-type-data format as advertising data.
    public let eir: [UInt8]

    public init(address: BluetoothAddress, addressType: BluetoothAddressType, rssi: Int8, flags: UInt32, eir: [UInt8]) {
        self.address = address
        self.addressType = addressType
        self.rssi = rssi
        self.flags = flags
        self.eir = eir
    }

    /// Flag bit 2: the advertiser does not accept connections.
    public var isConnectable: Bool { flags & 0x04 == 0 }
}

extension MgmtReader {
    mutating func addressType() throws(MgmtError) -> BluetoothAddressType {
        let raw = try u8()
        guard let type = BluetoothAddressType(rawValue: raw) else { throw .invalidParameter("address type \(raw)") }
        return type
    }
}

// MARK: Return parameters of the commands we send

/// Read Controller Information: address, settings and name (fixed 280-byte layout).
public struct MgmtControllerInfo: Equatable, Sendable {
    public let address: BluetoothAddress
    public let bluetoothVersion: UInt8
    public let manufacturer: UInt16
    public let supportedSettings: MgmtSettings
    public let currentSettings: MgmtSettings
    public let name: String
    public let shortName: String

    public static func parse(_ parameters: [UInt8]) throws(MgmtError) -> MgmtControllerInfo {
        var r = MgmtReader(parameters[...], what: "controller info")
        let address = try r.address(), version = try r.u8(), manufacturer = try r.u16()
        let supported = MgmtSettings(rawValue: try r.u32()), current = MgmtSettings(rawValue: try r.u32())
        _ = try r.take(3) // class of device
        let name = cString(try r.take(249)), short = cString(try r.take(11))
        return MgmtControllerInfo(address: address, bluetoothVersion: version, manufacturer: manufacturer,
                                  supportedSettings: supported, currentSettings: current, name: name, shortName: short)
    }

    /// Up to the first NUL; invalid UTF-8 is repaired rather than rejected (a name is informative only).
    private static func cString(_ field: [UInt8]) -> String {
        String(decoding: field.prefix { $0 != 0 }, as: UTF8.self)
    }
}

/// Read Controller Index List: the indexes of the controllers the kernel knows.
public enum MgmtControllerIndexList {
    public static func parse(_ parameters: [UInt8]) throws(MgmtError) -> [UInt16] {
        var r = MgmtReader(parameters[...], what: "controller index list")
        let count = Int(try r.u16())
        var indexes = [UInt16]()
        for _ in 0..<count { indexes.append(try r.u16()) }
        return indexes
    }
}

/// The 4-byte Current_Settings that Set Powered/Connectable/LE/BR-EDR/Privacy return.
public enum MgmtCurrentSettings {
    public static func parse(_ parameters: [UInt8]) throws(MgmtError) -> MgmtSettings {
        var r = MgmtReader(parameters[...], what: "current settings")
        return MgmtSettings(rawValue: try r.u32())
    }
}

/// Get Connection Information. RSSI 127 and TX power 127 mean "not available". btvirt's
/// emulated controller answers every Read RSSI with -1 (and TX -1, max TX 4), so a constant
/// -1 in a VM run is the emulator, not a measurement.
public struct MgmtConnectionInfo: Equatable, Sendable {
    public let address: BluetoothAddress
    public let addressType: BluetoothAddressType
    public let rssi: Int8
    public let txPower: Int8
    public let maxTxPower: Int8

    public init(address: BluetoothAddress, addressType: BluetoothAddressType, rssi: Int8, txPower: Int8, maxTxPower: Int8) {
        self.address = address
        self.addressType = addressType
        self.rssi = rssi
        self.txPower = txPower
        self.maxTxPower = maxTxPower
    }

    public static func parse(_ parameters: [UInt8]) throws(MgmtError) -> MgmtConnectionInfo {
        var r = MgmtReader(parameters[...], what: "connection info")
        return MgmtConnectionInfo(address: try r.address(), addressType: try r.addressType(),
                                  rssi: Int8(bitPattern: try r.u8()), txPower: Int8(bitPattern: try r.u8()),
                                  maxTxPower: Int8(bitPattern: try r.u8()))
    }

    /// The RSSI if the controller measured one.
    public var measuredRSSI: Int8? { rssi == 127 ? nil : rssi }
}

// Numbers from the BlueZ management API (doc/mgmt-api.txt): opcodes, event codes, status codes
// and the current-settings bits. Only the ones this gateway uses are named.

/// The controller index for commands that address no controller (Read Controller Index List).
public let mgmtNoControllerIndex: UInt16 = 0xFFFF

public enum MgmtOpcode: UInt16, Sendable {
    case readControllerIndexList = 0x0003
    case readControllerInfo = 0x0004
    case setPowered = 0x0005
    case setConnectable = 0x0007
    case setBondable = 0x0009
    case setLowEnergy = 0x000D
    case setLocalName = 0x000F
    case disconnect = 0x0014
    case startDiscovery = 0x0023
    case stopDiscovery = 0x0024
    case setAdvertising = 0x0029
    case setBREDR = 0x002A
    case setPrivacy = 0x002F
    case getConnectionInfo = 0x0031
    case addAdvertising = 0x003E
    case removeAdvertising = 0x003F
}

public enum MgmtEventCode: UInt16, Sendable {
    case commandComplete = 0x0001
    case commandStatus = 0x0002
    case controllerError = 0x0003
    case indexAdded = 0x0004
    case indexRemoved = 0x0005
    case newSettings = 0x0006
    case deviceConnected = 0x000B
    case deviceDisconnected = 0x000C
    case deviceFound = 0x0012
    case discovering = 0x0013
    case advertisingAdded = 0x0023
    case advertisingRemoved = 0x0024
}

/// A command's outcome as the kernel reports it.
public struct MgmtStatus: RawRepresentable, Hashable, Sendable, CustomStringConvertible {
    public let rawValue: UInt8
    public init(rawValue: UInt8) { self.rawValue = rawValue }

    public static let success = MgmtStatus(rawValue: 0x00)
    public static let unknownCommand = MgmtStatus(rawValue: 0x01)
    public static let notConnected = MgmtStatus(rawValue: 0x02)
    public static let failed = MgmtStatus(rawValue: 0x03)
    public static let connectFailed = MgmtStatus(rawValue: 0x04)
    public static let authenticationFailed = MgmtStatus(rawValue: 0x05)
    public static let notPaired = MgmtStatus(rawValue: 0x06)
    public static let noResources = MgmtStatus(rawValue: 0x07)
    public static let timeout = MgmtStatus(rawValue: 0x08)
    public static let alreadyConnected = MgmtStatus(rawValue: 0x09)
    public static let busy = MgmtStatus(rawValue: 0x0A)
    public static let rejected = MgmtStatus(rawValue: 0x0B)
    public static let notSupported = MgmtStatus(rawValue: 0x0C)
    public static let invalidParameters = MgmtStatus(rawValue: 0x0D)
    public static let disconnected = MgmtStatus(rawValue: 0x0E)
    public static let notPowered = MgmtStatus(rawValue: 0x0F)
    public static let cancelled = MgmtStatus(rawValue: 0x10)
    public static let invalidIndex = MgmtStatus(rawValue: 0x11)
    public static let rfKilled = MgmtStatus(rawValue: 0x12)
    public static let alreadyPaired = MgmtStatus(rawValue: 0x13)
    public static let permissionDenied = MgmtStatus(rawValue: 0x14)

    public var description: String {
        let names: [UInt8: String] = [
            0x00: "Success", 0x01: "Unknown Command", 0x02: "Not Connected", 0x03: "Failed",
            0x04: "Connect Failed", 0x05: "Authentication Failed", 0x06: "Not Paired",
            0x07: "No Resources", 0x08: "Timeout", 0x09: "Already Connected", 0x0A: "Busy",
            0x0B: "Rejected", 0x0C: "Not Supported", 0x0D: "Invalid Parameters",
            0x0E: "Disconnected", 0x0F: "Not Powered", 0x10: "Cancelled", 0x11: "Invalid Index",
            0x12: "RFKilled", 0x13: "Already Paired", 0x14: "Permission Denied",
        ]
        return names[rawValue] ?? "status 0x\(String(rawValue, radix: 16))"
    }
}

/// The 32-bit current/supported settings bitmask.
public struct MgmtSettings: OptionSet, Hashable, Sendable {
    public let rawValue: UInt32
    public init(rawValue: UInt32) { self.rawValue = rawValue }

    public static let powered = MgmtSettings(rawValue: 1 << 0)
    public static let connectable = MgmtSettings(rawValue: 1 << 1)
    public static let discoverable = MgmtSettings(rawValue: 1 << 3)
    public static let bondable = MgmtSettings(rawValue: 1 << 4)
    public static let bredr = MgmtSettings(rawValue: 1 << 7)
    public static let lowEnergy = MgmtSettings(rawValue: 1 << 9)
    public static let advertising = MgmtSettings(rawValue: 1 << 10)
    public static let secureConnections = MgmtSettings(rawValue: 1 << 11)
    public static let privacy = MgmtSettings(rawValue: 1 << 13)
    public static let staticAddress = MgmtSettings(rawValue: 1 << 15)
}

/// Add Advertising flags.
public struct MgmtAdvertisingFlags: OptionSet, Hashable, Sendable {
    public let rawValue: UInt32
    public init(rawValue: UInt32) { self.rawValue = rawValue }

    public static let connectable = MgmtAdvertisingFlags(rawValue: 0x01)
    /// The kernel prepends a 3-byte Flags structure (general discoverable).
    public static let discoverable = MgmtAdvertisingFlags(rawValue: 0x02)
    /// The kernel appends the local name to the scan response.
    public static let localNameInScanResponse = MgmtAdvertisingFlags(rawValue: 0x40)

    /// What the car uses: 0x43.
    public static let car: MgmtAdvertisingFlags = [.connectable, .discoverable, .localNameInScanResponse]
}

/// Start/Stop Discovery address-type mask: bit 0 BR/EDR, bit 1 LE public, bit 2 LE random.
public let mgmtDiscoveryLowEnergy: UInt8 = 0x06

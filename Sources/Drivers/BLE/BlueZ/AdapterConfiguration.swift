// What the adapter controller is told to bring about, validated once up front so nothing built
// later can fail: the names fit their fields, the IRK is 16 bytes, the advertising data fits.

public struct AdapterConfiguration: Equatable, Sendable {
    public enum Selection: Equatable, Sendable {
        /// hci<N>.
        case index(UInt16)
        /// The adapter with this identity address, found via the controller index list.
        case address(BluetoothAddress)
    }

    public var adapter: Selection
    /// The local name the kernel puts into the scan response.
    public var name: String
    /// AD structures without Flags (the kernel adds them), e.g. `CarAdvertisement.advertisingData`.
    public var advertisingData: [UInt8]
    /// Privacy (resolvable private addresses) with this identity resolving key; nil: off.
    public var identityResolvingKey: [UInt8]?
    /// Switch BR/EDR off so the controller is LE-only (needs a power-off during bring-up).
    public var disableBREDR: Bool
    public var instance: UInt8
    public var flags: MgmtAdvertisingFlags
    /// A command without Command Complete after this long counts as failed.
    public var commandTimeoutMillis: UInt64
    /// Back-off after a failed command: doubles from the first to the cap, reset on success.
    public var retryFirstMillis: UInt64
    public var retryMaxMillis: UInt64
    /// A Disconnect is answered when the link is down: at once from a phone in range, after its
    /// supervision timeout (at most 32 s in the Core spec) from one that vanished. Past this
    /// the controller stops waiting and reports it failed.
    public var disconnectTimeoutMillis: UInt64

    public init(adapter: Selection, name: String, advertisingData: [UInt8], identityResolvingKey: [UInt8]? = nil,
                disableBREDR: Bool = false, instance: UInt8 = 1, flags: MgmtAdvertisingFlags = .car,
                commandTimeoutMillis: UInt64 = 5_000, retryFirstMillis: UInt64 = 1_000, retryMaxMillis: UInt64 = 30_000,
                disconnectTimeoutMillis: UInt64 = 40_000) {
        self.adapter = adapter
        self.name = name
        self.advertisingData = advertisingData
        self.identityResolvingKey = identityResolvingKey
        self.disableBREDR = disableBREDR
        self.instance = instance
        self.flags = flags
        self.commandTimeoutMillis = commandTimeoutMillis
        self.retryFirstMillis = retryFirstMillis
        self.retryMaxMillis = retryMaxMillis
        self.disconnectTimeoutMillis = disconnectTimeoutMillis
    }

    /// Parameters of the commands that carry configured data, built (and so validated) once.
    struct Prepared: Equatable, Sendable {
        var localName: [UInt8]
        var privacy: [UInt8]?
        var addAdvertising: [UInt8]
    }

    func prepare() throws(MgmtError) -> Prepared {
        let name = try MgmtCommand.setLocalName(name, index: 0).parameters
        var privacy: [UInt8]?
        if let key = identityResolvingKey {
            privacy = try MgmtCommand.setPrivacy(true, identityResolvingKey: key, index: 0).parameters
        }
        return Prepared(localName: name, privacy: privacy, addAdvertising: try advertisingParameters(advertisingData))
    }

    func advertisingParameters(_ data: [UInt8]) throws(MgmtError) -> [UInt8] {
        let limit = flags.contains(.discoverable) ? AdvertisingData.limitWithKernelFlags : AdvertisingData.legacyLimit
        guard data.count <= limit else {
            throw .invalidParameter("advertising data is \(data.count) bytes, at most \(limit) with these flags")
        }
        return try MgmtCommand.addAdvertising(instance: instance, flags: flags, advertisingData: data, index: 0).parameters
    }
}

/// Failures the controller reports (and keeps as `lastError`).
public enum AdapterError: Error, Equatable, Sendable, CustomStringConvertible {
    case commandFailed(MgmtOpcode, MgmtStatus)
    case commandTimedOut(MgmtOpcode)
    case malformedReply(MgmtOpcode, MgmtError)
    /// No controller has the configured address (yet): retried with back-off.
    case adapterNotFound(BluetoothAddress)
    /// Index Removed for our adapter (unplugged, driver unbound).
    case adapterRemoved(index: UInt16)
    case controllerError(index: UInt16, code: UInt8)

    public var description: String {
        switch self {
        case .commandFailed(let opcode, let status): return "mgmt \(opcode) failed: \(status)"
        case .commandTimedOut(let opcode): return "mgmt \(opcode): no reply"
        case .malformedReply(let opcode, let error): return "mgmt \(opcode): \(error)"
        case .adapterNotFound(let address): return "no Bluetooth adapter with address \(address)"
        case .adapterRemoved(let index): return "Bluetooth adapter hci\(index) was removed"
        case .controllerError(let index, let code): return "hci\(index) controller error 0x\(String(code, radix: 16))"
        }
    }
}

/// What the controller tells its owner, besides commands to send.
public enum AdapterReport: Equatable, Sendable {
    case failed(AdapterError)
    /// Our advertising instance was (re)added; `address` is the adapter's identity address.
    case advertising(address: BluetoothAddress?)
    case connectionInfo(MgmtConnectionInfo)
    case connectionInfoFailed(address: BluetoothAddress, type: BluetoothAddressType, status: MgmtStatus)
    case deviceConnected(address: BluetoothAddress, type: BluetoothAddressType)
    case deviceDisconnected(address: BluetoothAddress, type: BluetoothAddressType, reason: MgmtDisconnectReason)
    /// A `disconnect` we asked for: the kernel confirmed the link down.
    case disconnected(address: BluetoothAddress, type: BluetoothAddressType)
    /// A `disconnect` we asked for that did not end a link: Not Connected (the peer left first),
    /// Not Powered (the adapter went down), Timeout (no answer in `disconnectTimeoutMillis`),
    /// or another status. Every `disconnect` gets exactly one of these two reports unless it is
    /// cancelled first.
    case disconnectFailed(address: BluetoothAddress, type: BluetoothAddressType, status: MgmtStatus)
}

public struct AdapterState: Equatable, Sendable {
    public var index: UInt16?
    public var address: BluetoothAddress?
    /// The last current-settings the kernel reported.
    public var settings: MgmtSettings = []
    /// Our instance is installed (as far as the events tell).
    public var advertising = false
    public var lastError: AdapterError?

    public var powered: Bool { settings.contains(.powered) }

    /// The address type incoming LE links carry on our side, which the CID-4 listener's
    /// l2_bdaddr_type must equal (the kernel matches fixed-channel listeners on it even when
    /// bound to BDADDR_ANY). A controller using a static random address, or one without a
    /// public address, is random; otherwise public, RPAs from privacy included (the kernel
    /// compares the identity address).
    public var identityAddressType: BluetoothAddressType {
        settings.contains(.staticAddress) || address == .any ? .leRandom : .lePublic
    }
}

extension AdapterConfiguration.Selection: CustomStringConvertible {
    /// For the log: `hci0`, or the identity address (before its index is known).
    public var description: String {
        switch self {
        case .index(let index): return "hci\(index)"
        case .address(let address): return "\(address)"
        }
    }
}

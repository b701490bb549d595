// The phone side's scanner as a sans-IO core: Start Discovery (LE), Device Found events turned
// into parsed advertisements, Stop Discovery. The kernel ends an LE discovery on its own after
// about ten seconds (Discovering 0), so while scanning is wanted the core starts it again.
//
// It also restarts discovery every `restartMillis`: the kernel reports a device once per
// discovery (duplicate filtering), and drops reports that arrive before the discovery is marked
// active. btvirt's controller sends each advertiser's report once, when scanning is enabled, so
// a scan that lost that race would wait out its whole timeout (seen in the lane, 1 run in 3).

public struct ScannedAdvertisement: Equatable, Sendable {
    public let address: BluetoothAddress
    public let addressType: BluetoothAddressType
    /// nil when the controller had no value (127; btvirt always reports 127).
    public let rssi: Int8?
    public let connectable: Bool
    public let structures: [ADStructure]
    public let parsed: ParsedAdvertisement
}

public struct ScannerCore: Sendable {
    public let index: UInt16
    /// Pause before restarting after a failure (Busy while another discovery runs, Not Powered...).
    public let retryMillis: UInt64

    public private(set) var discovering = false
    public private(set) var lastError: AdapterError?
    /// Device Found events whose AD data did not parse (skipped).
    public private(set) var malformedCount = 0

    private var wanted = false
    private var inFlight: (opcode: MgmtOpcode, sentAt: UInt64)?
    private var retryAt: UInt64 = 0
    private var found: [ScannedAdvertisement] = []
    private let timeoutMillis: UInt64 = 5_000

    /// Stop and start again after this long in one discovery (0: never).
    public let restartMillis: UInt64
    private var discoveringSince: UInt64 = 0

    public init(index: UInt16, retryMillis: UInt64 = 1_000, restartMillis: UInt64 = 1_500) {
        self.index = index
        self.retryMillis = retryMillis
        self.restartMillis = restartMillis
    }

    public mutating func start() { wanted = true }
    public mutating func stop() { wanted = false }

    public mutating func nextCommand(nowMillis: UInt64) -> MgmtCommand? {
        if let current = inFlight {
            // A lost reply must not wedge the scanner.
            guard nowMillis >= current.sentAt + timeoutMillis else { return nil }
            lastError = .commandTimedOut(current.opcode)
            inFlight = nil
        }
        guard nowMillis >= retryAt else { return nil }
        let windowOver = wanted && discovering && restartMillis > 0 && nowMillis >= discoveringSince + restartMillis
        guard wanted != discovering || windowOver else { return nil }
        let command: MgmtCommand = wanted && !discovering ? .startDiscovery(index: index) : .stopDiscovery(index: index)
        inFlight = (command.opcode, nowMillis)
        return command
    }

    public mutating func receive(_ event: MgmtEvent, nowMillis: UInt64) {
        guard event.controllerIndex == index else { return }
        switch event.body {
        case .commandComplete(let opcode, let status, _), .commandStatus(let opcode, let status):
            guard let current = inFlight, opcode == current.opcode.rawValue else { return }
            if case .commandStatus = event.body, status == .success { return }
            inFlight = nil
            if status == .success {
                setDiscovering(current.opcode == .startDiscovery, nowMillis: nowMillis)
            } else if current.opcode == .stopDiscovery && status == .rejected {
                // Rejected: there was no discovery to stop.
                setDiscovering(false, nowMillis: nowMillis)
            } else {
                lastError = .commandFailed(current.opcode, status)
                retryAt = nowMillis + retryMillis
            }
        case .discovering(_, let active):
            setDiscovering(active, nowMillis: nowMillis)
        case .deviceFound(let device):
            do throws(AdvertisingDataError) {
                let structures = try AdvertisingData.parse(device.eir)
                found.append(ScannedAdvertisement(address: device.address, addressType: device.addressType,
                                                  rssi: device.rssi == 127 ? nil : device.rssi,
                                                  connectable: device.isConnectable, structures: structures,
                                                  parsed: ParsedAdvertisement(structures: structures)))
            } catch {
                malformedCount += 1
            }
        case .indexRemoved:
            discovering = false
            inFlight = nil
        default:
            break
        }
    }

    private mutating func setDiscovering(_ active: Bool, nowMillis: UInt64) {
        if active && !discovering { discoveringSince = nowMillis }
        discovering = active
    }

    /// Advertisements seen since the last call. The kernel may deliver an advertisement and its
    /// scan response in one event or in two: merge by address if the name matters.
    public mutating func takeAdvertisements() -> [ScannedAdvertisement] {
        defer { found.removeAll() }
        return found
    }
}

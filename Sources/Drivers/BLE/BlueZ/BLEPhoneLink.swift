// The phone's end of a Bluetooth LE link (`carkey phone --ble`): find the car by scanning for
// the key service (and, with the car's advertising key, its rotating identifier), connect on
// the ATT channel, run GATT discovery and subscribe (ATTClientConnection), then carry whole
// protocol messages fragmented over the MTU. Blocking, every wait bounded by a deadline.
import Protocol

public enum BLEPhoneLinkError: Error, Equatable, Sendable, CustomStringConvertible {
    case socket(BluetoothSocketError)
    case adapter(String)
    case carNotFound(afterMillis: UInt64, advertisementsSeen: Int)
    case timedOut(String, afterMillis: UInt64)
    case gatt(ATTClientError)
    case closedByCar(LinkEndReason)

    public var description: String {
        switch self {
        case .socket(let error): return "\(error)"
        case .adapter(let what): return what
        case .carNotFound(let millis, let seen):
            return "no car with the key service found within \(millis) ms (\(seen) advertisement(s) seen)"
        case .timedOut(let what, let millis): return "\(what): no answer from the car within \(millis) ms"
        case .gatt(let error): return "GATT: \(error)"
        case .closedByCar(let reason): return "the link ended: \(reason)"
        }
    }
}

/// A car found by a scan.
public struct FoundCar: Equatable, Sendable {
    public let address: BluetoothAddress
    public let addressType: BluetoothAddressType
    public let rssi: Int8?
    public let name: String?
    /// The identifier resolved with the phone's advertising key (false: matched by UUID only).
    public let identified: Bool
    /// Milliseconds from the start of the scan.
    public let foundAfterMillis: UInt64
}

public final class BLEPhoneLink: PhoneLink {
    private let connection: L2CAPConnection
    private var client = ATTClientConnection()
    private let clock: any MonotonicClock
    private var received: [Bytes] = []
    public let timeoutMillis: UInt64
    /// Milliseconds spent on connect and on GATT set-up (MTU, discovery, subscribe).
    public private(set) var connectMillis: UInt64 = 0
    public private(set) var setupMillis: UInt64 = 0
    public var mtu: Int { Int(client.mtu) }

    /// The address of adapter `index` (mgmt Read Controller Info), and whether it is powered.
    public static func adapterAddress(index: UInt16, timeoutMillis: UInt64, clock: any MonotonicClock = SystemClock()) throws(BLEPhoneLinkError) -> BluetoothAddress {
        let socket: MgmtSocket
        do throws(BluetoothSocketError) { socket = try MgmtSocket.open() } catch { throw .socket(error) }
        defer { socket.close() }
        let parameters = try request(.readControllerInfo(index: index), on: socket, timeoutMillis: timeoutMillis, clock: clock)
        let info: MgmtControllerInfo
        do throws(MgmtError) { info = try MgmtControllerInfo.parse(parameters) } catch { throw .adapter("hci\(index): \(error)") }
        guard info.currentSettings.contains(.powered) else {
            throw .adapter("hci\(index) is not powered (btmgmt --index \(index) power on)")
        }
        guard info.currentSettings.contains(.lowEnergy) else {
            throw .adapter("hci\(index) has LE off (btmgmt --index \(index) le on)")
        }
        return info.address
    }

    /// Scans on adapter `index` until `accept` takes an advertisement of the key service, or
    /// the time is up. Scan responses and advertisements arrive separately; both are offered.
    public static func scan(index: UInt16, timeoutMillis: UInt64, advertisingKey: AdvertisingKey?,
                            clock: any MonotonicClock = SystemClock()) throws(BLEPhoneLinkError) -> FoundCar {
        let socket: MgmtSocket
        do throws(BluetoothSocketError) { socket = try MgmtSocket.open() } catch { throw .socket(error) }
        let scanner = ManagementScanner(index: index, socket: socket, clock: clock)
        defer {
            scanner.stop()
            _ = try? scanner.service()
            scanner.close()
        }
        let start = clock.nowMillis()
        let end = start + timeoutMillis
        var seen = 0
        var names: [BluetoothAddress: String] = [:]
        scanner.start()
        while true {
            let advertisements: [ScannedAdvertisement]
            do throws(BluetoothSocketError) { advertisements = try scanner.service() } catch { throw .socket(error) }
            for advertisement in advertisements {
                seen += 1
                if let name = advertisement.parsed.name { names[advertisement.address] = name }
                guard advertisement.connectable, let identifier = advertisement.parsed.carIdentifier else { continue }
                let identified = advertisingKey.map { AdvertisingIdentifier.resolve(identifier, key: $0) } ?? false
                // With the car's key, another car's advertisement is not ours.
                guard advertisingKey == nil || identified else { continue }
                return FoundCar(address: advertisement.address, addressType: advertisement.addressType, rssi: advertisement.rssi,
                                name: advertisement.parsed.name ?? names[advertisement.address], identified: identified,
                                foundAfterMillis: clock.nowMillis() - start)
            }
            let now = clock.nowMillis()
            guard now < end else { throw .carNotFound(afterMillis: timeoutMillis, advertisementsSeen: seen) }
            do throws(Errno) { _ = try Poll.wait([(scanner.descriptor, .readable)], timeoutMillis: Int32(min(end - now, 250))) } catch {
                throw .socket(.system(error))
            }
        }
    }

    /// Connects from adapter `index` to the car and sets up GATT (MTU, discovery, subscription).
    public init(index: UInt16, car: BluetoothAddress, carType: BluetoothAddressType, timeoutMillis: UInt64,
                clock: any MonotonicClock = SystemClock()) throws(BLEPhoneLinkError) {
        self.clock = clock
        self.timeoutMillis = timeoutMillis
        let local = try Self.adapterAddress(index: index, timeoutMillis: timeoutMillis, clock: clock)
        let started = clock.nowMillis()
        do throws(BluetoothSocketError) {
            connection = try L2CAPConnection.connectATT(local: local, peer: car, peerType: carType,
                                                        timeoutMillis: Int32(clamping: timeoutMillis))
        } catch {
            throw .socket(error)
        }
        connectMillis = clock.nowMillis() - started
        do throws(BLEPhoneLinkError) {
            try write(client.start())
            let deadline = clock.nowMillis() + timeoutMillis
            while !client.isReady { try exchange(until: deadline, what: "GATT set-up") }
        } catch {
            connection.close()
            throw error
        }
        setupMillis = clock.nowMillis() - started - connectMillis
    }

    deinit { connection.close() }

    public func send(_ message: Bytes) throws {
        let pdus: [Bytes]
        do throws(ATTClientError) { pdus = try client.send(message: message) } catch { throw BLEPhoneLinkError.gatt(error) }
        try write(pdus)
    }

    /// One Write Command to the phone-to-car value carrying `bytes` as its fragment.
    public func sendUnframed(_ bytes: Bytes) throws {
        guard client.isReady, let handle = client.phoneToCarHandle else { throw BLEPhoneLinkError.gatt(.notReady) }
        try write([ATTPDU.writeCommand(handle: handle, value: bytes)])
    }

    public func receive() throws -> Bytes {
        let deadline = clock.nowMillis() + timeoutMillis
        while received.isEmpty { try exchange(until: deadline, what: "waiting for a message") }
        return received.removeFirst()
    }

    /// Reads one PDU (waiting until `deadline`) and answers what the client says to answer.
    private func exchange(until deadline: UInt64, what: String) throws(BLEPhoneLinkError) {
        try wait(for: .readable, until: deadline, what: what)
        let result: L2CAPReceive
        do throws(BluetoothSocketError) { result = try connection.receivePDU() } catch { throw .socket(error) }
        switch result {
        case .wouldBlock: return
        case .ended(let reason): throw .closedByCar(reason)
        case .pdu(let pdu):
            let output: ATTClientOutput
            do throws(ATTClientError) { output = try client.receive(pdu) } catch { throw .gatt(error) }
            received += output.messages
            try write(output.pdus)
        }
    }

    private func write(_ pdus: [Bytes]) throws(BLEPhoneLinkError) {
        let deadline = clock.nowMillis() + timeoutMillis
        for pdu in pdus {
            while true {
                switch connection.sendPDU(pdu) {
                case .sent: break
                case .wouldBlock:
                    try wait(for: .writable, until: deadline, what: "sending")
                    continue
                case .ended(let reason): throw .closedByCar(reason)
                }
                break
            }
        }
    }

    private func wait(for events: PollEvents, until deadline: UInt64, what: String) throws(BLEPhoneLinkError) {
        let now = clock.nowMillis()
        guard now < deadline else { throw .timedOut(what, afterMillis: timeoutMillis) }
        let ready: [PollEvents]
        do throws(Errno) { ready = try Poll.wait([(connection.descriptor, events)], timeoutMillis: Int32(clamping: deadline - now)) } catch {
            throw .socket(.system(error))
        }
        guard let first = ready.first, !first.isEmpty else { throw .timedOut(what, afterMillis: timeoutMillis) }
    }

    /// One management command and its Command Complete parameters (blocking, for tools).
    static func request(_ command: MgmtCommand, on socket: MgmtSocket, timeoutMillis: UInt64,
                        clock: any MonotonicClock) throws(BLEPhoneLinkError) -> [UInt8] {
        do throws(BluetoothSocketError) { _ = try socket.send(command) } catch { throw .socket(error) }
        let end = clock.nowMillis() + timeoutMillis
        var malformed = 0
        while clock.nowMillis() < end {
            do throws(Errno) { _ = try Poll.wait([(socket.descriptor, .readable)], timeoutMillis: Int32(clamping: end - clock.nowMillis())) } catch {
                throw .socket(.system(error))
            }
            let events: [MgmtEvent]
            do throws(BluetoothSocketError) { events = try socket.receiveEvents(malformed: &malformed) } catch { throw .socket(error) }
            for event in events where event.controllerIndex == command.controllerIndex {
                switch event.body {
                case .commandComplete(let opcode, let status, let parameters) where opcode == command.opcode.rawValue:
                    guard status == .success else { throw .adapter("\(command): \(status)") }
                    return parameters
                case .commandStatus(let opcode, let status) where opcode == command.opcode.rawValue && status != .success:
                    throw .adapter("\(command): \(status)")
                default: continue
                }
            }
        }
        throw .timedOut("\(command)", afterMillis: timeoutMillis)
    }
}

// The car's phone link over Bluetooth LE, through BlueZ without bluetoothd: the management
// socket owns the adapter (power, LE, name, private addresses, advertising; ManagedAdapter),
// an L2CAP listener on the ATT channel (CID 4) accepts phones, and each link runs its own ATT
// server (ATTServerConnection) whose key-service characteristics carry fragmented protocol
// messages. Non-blocking and driven by the agent's poll loop like the other link servers.
//
// A phone that stalls never blocks another: every socket is non-blocking, each link has its
// own bounded output queue, and reads are bounded per link per round. A phone that vanishes
// without the controller noticing is closed by the idle timeout.
//
// When the car ends a link (close, idle timeout, a broken fragment, a phone not keeping up, a
// connection over the limit) closing the ATT socket is not enough: the kernel keeps the LE
// connection for seconds after its last channel is gone, the phone sees nothing meanwhile and
// the radio stays busy. So the LE connection itself is terminated (mgmt Disconnect). When the
// phone ends it, the link is just closed. Either way one notice names the phone's address, the
// link and why.
import Protocol

public final class BlueZLinkServer: LinkServer {
    public struct Configuration: Sendable {
        public var adapter: AdapterConfiguration.Selection
        /// The name in the scan response and the GAP Device Name.
        public var name: String
        public var maxLinks: Int = 4
        /// Links accepted beyond `maxLinks` for the agent to decide about: it closes a link
        /// without a session (or the newcomer) at once. 0: the server refuses by itself.
        public var spareSlots: Int = 0
        /// Nothing from the phone for this long closes the link.
        public var idleTimeoutMillis: UInt64 = 60_000
        /// Resolvable private addresses (a fresh random IRK each start: no peer bonds with us).
        public var privacy = true
        /// How often each link's RSSI is read (mgmt Get Connection Information).
        public var rssiIntervalMillis: UInt64 = 2_000
        /// PDUs a link may have waiting for socket room; beyond it the phone is not reading.
        public var maxPendingPDUs = 256
        /// PDUs read from one link per round (fairness between links).
        public var readBurst = 16

        public init(adapter: AdapterConfiguration.Selection, name: String) {
            self.adapter = adapter
            self.name = name
        }
    }

    private struct Link {
        let connection: L2CAPConnection
        var att: ATTServerConnection
        var pending: [Bytes] = []
        let connectedAtMillis: UInt64
        var lastHeardMillis: UInt64
        var rssi: Int?
        var nextRSSIMillis: UInt64
    }

    private enum Slot { case adapter, listener, link(LinkID) }

    private struct Peer: Hashable {
        let address: BluetoothAddress
        let type: BluetoothAddressType

        init(_ connection: L2CAPConnection) {
            address = connection.peer
            type = connection.peerType
        }

        init(_ address: BluetoothAddress, _ type: BluetoothAddressType) {
            self.address = address
            self.type = type
        }
    }

    public let configuration: Configuration
    private let adapter: ManagedAdapter
    private let clock: any MonotonicClock
    private var rotation: AdvertisingIdentifierRotation
    private let database: GATTDatabase
    private let listen: (BluetoothAddress) throws -> L2CAPListener
    private var listener: L2CAPListener?
    private var connections: [LinkID: Link] = [:]
    private var nextLink: UInt64 = 1
    private var lastPollOrder: [Slot] = []
    private var isShutDown = false
    /// Connections the car ended whose LE link is being terminated, with what to call them in
    /// the notice ("link#3").
    private var terminating: [Peer: String] = [:]
    /// What the adapter did lately, for the log (the caller drains it).
    public private(set) var notices: [String] = []

    /// Opens the management socket and starts bringing the adapter up. Fails when the kernel has
    /// no Bluetooth, the process lacks CAP_NET_ADMIN, or the advertisement does not fit.
    public convenience init(configuration: Configuration, advertisingKey: AdvertisingKey, rotationMillis: UInt64,
                            clock: any MonotonicClock = SystemClock()) throws {
        try self.init(configuration: configuration, advertisingKey: advertisingKey, rotationMillis: rotationMillis,
                      managementSocket: try MgmtSocket.open(),
                      listen: { address in try L2CAPListener.listenATT(address: address) }, clock: clock)
    }

    /// With the management socket and the ATT listener given: tests replay the kernel over a
    /// socketpair and serve the phone on a Unix SOCK_SEQPACKET socket (one PDU per packet, as
    /// on L2CAP).
    public init(configuration: Configuration, advertisingKey: AdvertisingKey, rotationMillis: UInt64,
                managementSocket: MgmtSocket, listen: @escaping (BluetoothAddress) throws -> L2CAPListener,
                clock: any MonotonicClock = SystemClock(), random: any RandomSource = SystemRandom()) throws {
        self.configuration = configuration
        self.clock = clock
        self.listen = listen
        let now = clock.nowMillis()
        rotation = try AdvertisingIdentifierRotation(key: advertisingKey, now: now, intervalMillis: rotationMillis, random: random)
        let data = try CarAdvertisement.advertisingData(rotatingIdentifier: rotation.current.bytes)
        let irk = configuration.privacy ? try random.randomBytes(16) : nil
        let adapterConfiguration = AdapterConfiguration(adapter: configuration.adapter, name: configuration.name,
                                                        advertisingData: data, identityResolvingKey: irk)
        adapter = try ManagedAdapter(configuration: adapterConfiguration, socket: managementSocket, clock: clock)
        database = GATTDatabase.car(deviceName: configuration.name)
        adapter.start()
        notices += service(now: now)
    }

    /// The rotating identifier now in the advertisement (tests; never secret: it is on the air).
    public var currentIdentifier: Bytes { rotation.current.bytes }

    // MARK: LinkServer

    public var endpointDescription: String {
        let state = adapter.state
        let index = state.index.map { "hci\($0)" } ?? "adapter \(configuration.adapter) (coming up)"
        let address = state.address.map { " \($0)" } ?? ""
        let mode = state.advertising ? "advertising" : (state.powered ? "powered, not advertising" : "not powered")
        return "\(index)\(address), \(mode), private addresses \(configuration.privacy ? "on" : "off")"
    }

    public var maxConnections: Int { configuration.maxLinks }
    public var links: [LinkID] { connections.keys.sorted { $0.rawValue < $1.rawValue } }
    public func isOpen(_ link: LinkID) -> Bool { connections[link] != nil }
    public func connectedAt(_ link: LinkID) -> UInt64? { connections[link]?.connectedAtMillis }

    public func facts(of link: LinkID) -> LinkFacts? {
        guard let entry = connections[link] else { return nil }
        return LinkFacts(transport: "ble", peerAddress: "\(entry.connection.peer) (\(entry.connection.peerType))",
                         rssi: entry.rssi, mtu: entry.att.mtu, connectedAtMillis: entry.connectedAtMillis)
    }

    public func pollSet() -> [(FileDescriptor, PollEvents)] {
        lastPollOrder = [.adapter] + (listener == nil ? [] : [.listener]) + links.map { .link($0) }
        return lastPollOrder.map { slot in
            switch slot {
            case .adapter: return (adapter.descriptor, .readable)
            case .listener: return (listener!.descriptor, .readable)
            case .link(let link):
                let entry = connections[link]!
                return (entry.connection.descriptor, entry.pending.isEmpty ? .readable : [.readable, .writable])
            }
        }
    }

    public func nextDeadline() -> UInt64? {
        var deadlines = [rotation.nextRotationMillis]
        if let adapterDeadline = adapter.controller.nextDeadlineMillis { deadlines.append(adapterDeadline) }
        for entry in connections.values {
            deadlines.append(entry.lastHeardMillis + configuration.idleTimeoutMillis)
            deadlines.append(entry.nextRSSIMillis)
        }
        return deadlines.min()
    }

    public func process(_ results: [PollEvents], nowMillis: UInt64) -> [LinkEvent] {
        var events: [LinkEvent] = []
        var acceptReady = false
        for (slot, ready) in zip(lastPollOrder, results) where !ready.isEmpty {
            switch slot {
            case .adapter: break // serviced below in every round (deadlines too)
            case .listener: acceptReady = true
            case .link(let link): events += serviceLink(link, ready: ready, now: nowMillis)
            }
        }
        notices += service(now: nowMillis)
        if acceptReady { events += acceptPending(now: nowMillis) }
        events += expireIdle(now: nowMillis)
        requestRSSI(now: nowMillis)
        return events
    }

    public func send(_ message: Bytes, to link: LinkID) -> LinkEvent? {
        guard var entry = connections[link] else { return nil }
        let pdus: [Bytes]
        do throws(ATTSendError) { pdus = try entry.att.send(message: message) } catch {
            connections[link] = entry
            // backlogFull: the phone neither subscribes nor confirms; it is not keeping up.
            if case .backlogFull = error { return drop(link, .outputOverflow) }
            return drop(link, .ioError("\(error)"))
        }
        entry.pending += pdus
        connections[link] = entry
        if let reason = flush(link) { return drop(link, reason) }
        return nil
    }

    public func close(_ link: LinkID) {
        guard connections[link] != nil else { return }
        _ = flush(link)
        if let entry = connections.removeValue(forKey: link) { terminate(entry.connection, "\(link)") }
    }

    public func shutdown() {
        guard !isShutDown else { return }
        isShutDown = true
        links.forEach(close)
        listener?.close()
        listener = nil
        adapter.withdrawAdvertising()
        adapter.close()
    }

    /// Log lines gathered since the last call (adapter up, advertising re-added, failures).
    public func takeNotices() -> [String] {
        defer { notices.removeAll() }
        return notices
    }

    // MARK: adapter

    private func service(now: UInt64) -> [String] {
        var lines: [String] = []
        do throws(AdvertisingIdentifierRotation.Failure) {
            if try rotation.update(now: now) {
                if let data = try? CarAdvertisement.advertisingData(rotatingIdentifier: rotation.current.bytes) {
                    try? adapter.replaceAdvertisingData(data)
                }
            }
        } catch {
            lines.append("advertising identifier not rotated: \(error)")
        }
        let reports: [AdapterReport]
        do throws(BluetoothSocketError) { reports = try adapter.service() } catch {
            return lines + ["management socket: \(error)"]
        }
        for report in reports {
            switch report {
            case .advertising(let address):
                lines.append("advertising on \(endpointDescription)")
                if listener == nil { openListener(address: address ?? adapter.state.address, lines: &lines) }
            case .failed(let error):
                lines.append("adapter: \(error)")
            case .connectionInfo(let info):
                for (link, entry) in connections where entry.connection.peer == info.address {
                    connections[link]?.rssi = info.measuredRSSI.map(Int.init)
                }
            case .disconnected(let address, let type):
                let name = terminating.removeValue(forKey: Peer(address, type)) ?? "an earlier link"
                lines.append("phone \(address) (\(type)) on \(name) disconnected by the car (HCI reason 0x13, remote user terminated)")
            case .disconnectFailed(let address, let type, let status):
                let name = terminating.removeValue(forKey: Peer(address, type)) ?? "an earlier link"
                if status == .notConnected || status == .notPowered {
                    lines.append("phone \(address) (\(type)) on \(name) had already disconnected")
                } else {
                    lines.append("phone \(address) (\(type)) on \(name): mgmt Disconnect failed (\(status)); "
                                 + "the kernel drops the LE link by itself")
                }
            case .connectionInfoFailed, .deviceConnected, .deviceDisconnected:
                break
            }
        }
        return lines
    }

    /// The ATT listener is bound to the adapter's identity address, so a host with several
    /// controllers (the test VM, a board with a USB dongle) serves phones on this one only.
    private func openListener(address: BluetoothAddress?, lines: inout [String]) {
        do {
            listener = try listen(address ?? .any)
            lines.append("ATT server listening on \(address.map(String.init(describing:)) ?? "any adapter") CID 4")
        } catch {
            lines.append("ATT listener: \(error)")
        }
    }

    // MARK: links

    private func acceptPending(now: UInt64) -> [LinkEvent] {
        guard let listener else { return [] }
        var events: [LinkEvent] = []
        let hardCap = configuration.maxLinks + max(0, configuration.spareSlots)
        for _ in 0..<(configuration.maxLinks + 1) {
            // With spare slots the agent reclaims a link without a session for each newcomer;
            // more newcomers wait in the backlog for the next round (see SimulatedLinkServer).
            if configuration.spareSlots > 0, connections.count >= configuration.maxLinks, !events.isEmpty { break }
            guard let accepted = try? listener.accept() else { break }
            let peer = Peer(accepted)
            // An old request for this address must not cut the new link; one already sent
            // reached the old connection.
            if adapter.cancelDisconnect(address: peer.address, type: peer.type) { terminating[peer] = nil }
            guard connections.count < hardCap else {
                // Over BLE there is no channel for a Fault before the phone subscribes: the
                // disconnect is the answer.
                terminate(accepted, "a connection refused busy")
                events.append(.refusedBusy)
                continue
            }
            let link = LinkID(nextLink)
            nextLink += 1
            connections[link] = Link(connection: accepted, att: ATTServerConnection(database: database),
                                     connectedAtMillis: now, lastHeardMillis: now, nextRSSIMillis: now)
            events.append(.connected(link))
        }
        return events
    }

    private func serviceLink(_ link: LinkID, ready: PollEvents, now: UInt64) -> [LinkEvent] {
        guard connections[link] != nil else { return [] }
        if ready.contains(.writable), let reason = flush(link) { return [drop(link, reason)] }
        guard !ready.isDisjoint(with: [.readable, .hangUp, .error, .invalid]) else { return [] }
        var events: [LinkEvent] = []
        for _ in 0..<configuration.readBurst {
            guard let entry = connections[link] else { break }
            let received: L2CAPReceive
            do throws(BluetoothSocketError) { received = try entry.connection.receivePDU() } catch {
                return events + [drop(link, .ioError("\(error)"))]
            }
            switch received {
            case .wouldBlock:
                return events
            case .ended(let reason):
                return events + [drop(link, Self.closeReason(reason))]
            case .pdu(let pdu):
                var updated = entry
                updated.lastHeardMillis = now
                let output = updated.att.receive(pdu)
                updated.pending += output.pdus
                connections[link] = updated
                events += output.messages.map { .message(link, $0) }
                if let error = output.fatalError {
                    _ = flush(link)
                    return events + [drop(link, .malformedFrame("\(error)"))]
                }
                if let reason = flush(link) { return events + [drop(link, reason)] }
            }
        }
        return events
    }

    private func expireIdle(now: UInt64) -> [LinkEvent] {
        let idle = configuration.idleTimeoutMillis
        return links.compactMap { link in
            guard let entry = connections[link], now >= entry.lastHeardMillis + idle else { return nil }
            return drop(link, .idleTimeout(millis: idle))
        }
    }

    private func requestRSSI(now: UInt64) {
        for link in links {
            guard let entry = connections[link], now >= entry.nextRSSIMillis else { continue }
            connections[link]?.nextRSSIMillis = now + configuration.rssiIntervalMillis
            adapter.requestConnectionInformation(address: entry.connection.peer, type: entry.connection.peerType)
        }
    }

    /// Writes waiting PDUs in order; a reason to drop the link, or nil.
    private func flush(_ link: LinkID) -> LinkCloseReason? {
        guard var entry = connections[link] else { return nil }
        defer { connections[link] = entry }
        while let pdu = entry.pending.first {
            switch entry.connection.sendPDU(pdu) {
            case .sent: entry.pending.removeFirst()
            case .wouldBlock: return entry.pending.count > configuration.maxPendingPDUs ? .outputOverflow : nil
            case .ended(let reason): return Self.closeReason(reason)
            }
        }
        return nil
    }

    private func drop(_ link: LinkID, _ reason: LinkCloseReason) -> LinkEvent {
        guard let entry = connections.removeValue(forKey: link) else { return .closed(link, reason) }
        if Self.endedByPhone(reason) {
            entry.connection.close()
            let connection = entry.connection
            notices.append("phone \(connection.peer) (\(connection.peerType)) on \(link) disconnected: \(reason)")
        } else {
            terminate(entry.connection, "\(link)")
        }
        return .closed(link, reason)
    }

    /// The car ends a connection: the ATT socket, then the LE link (answered in `service`).
    private func terminate(_ connection: L2CAPConnection, _ name: String) {
        connection.close()
        let peer = Peer(connection)
        terminating[peer] = name
        adapter.disconnect(address: peer.address, type: peer.type)
    }

    /// The phone (or the adapter) ended the link: the LE connection is already gone. Every other
    /// reason is the car's decision.
    static func endedByPhone(_ reason: LinkCloseReason) -> Bool {
        switch reason {
        case .peerClosed, .linkLost, .adapterDown: return true
        case .idleTimeout, .malformedFrame, .outputOverflow, .ioError: return false
        }
    }

    static func closeReason(_ reason: LinkEndReason) -> LinkCloseReason {
        switch reason {
        case .linkLost: return .linkLost
        case .peerClosed, .notConnected, .hostDown, .refused: return .peerClosed
        case .adapterDown: return .adapterDown
        case .other(let errno): return .ioError(errno.description)
        }
    }
}

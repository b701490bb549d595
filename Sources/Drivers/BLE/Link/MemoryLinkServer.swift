// The in-memory twin of a link server, for in-process tests of the car (like swift-nio's
// EmbeddedChannel): the test plays the phones by calling `connect`, `deliver` and
// `disconnect`; the next `process` hands those to the agent as events, and what the car sends
// is kept per link for the test to read with `takeSent`. No descriptors, no threads, no time
// of its own: `nextDeadline` asks for a round at once while events wait.
import Protocol

public final class MemoryLinkServer: LinkServer {
    public let maxConnections: Int
    /// Connections accepted beyond `maxConnections` for the agent to decide about (see
    /// `SimulatedLinkServer.Configuration.spareSlots`).
    public let spareSlots: Int
    private var open: [LinkID: LinkFacts] = [:]
    private var pending: [LinkEvent] = []
    private var sent: [LinkID: [Bytes]] = [:]
    private var nextLink: UInt64 = 1
    /// Links the car closed itself (tests assert on them).
    public private(set) var closedByCar: [LinkID] = []
    public private(set) var isShutDown = false

    public init(maxConnections: Int = 8, spareSlots: Int = 0) {
        self.maxConnections = maxConnections
        self.spareSlots = max(0, spareSlots)
    }

    public var endpointDescription: String { "memory" }
    public var links: [LinkID] { open.keys.sorted { $0.rawValue < $1.rawValue } }
    public func isOpen(_ link: LinkID) -> Bool { open[link] != nil }
    public func connectedAt(_ link: LinkID) -> UInt64? { open[link]?.connectedAtMillis }
    public func facts(of link: LinkID) -> LinkFacts? { open[link] }
    public func pollSet() -> [(FileDescriptor, PollEvents)] { [] }
    public func nextDeadline() -> UInt64? { pending.isEmpty ? nil : 0 }

    public func process(_ results: [PollEvents], nowMillis: UInt64) -> [LinkEvent] {
        defer { pending.removeAll() }
        return pending
    }

    public func send(_ message: Bytes, to link: LinkID) -> LinkEvent? {
        guard open[link] != nil else { return nil }
        sent[link, default: []].append(message)
        return nil
    }

    public func close(_ link: LinkID) {
        guard open.removeValue(forKey: link) != nil else { return }
        closedByCar.append(link)
    }

    public func shutdown() {
        links.forEach(close)
        isShutDown = true
    }

    // MARK: the test's side (the phones)

    /// A phone connects; nil (and a `refusedBusy` event) when every slot is taken.
    @discardableResult
    public func connect(nowMillis: UInt64 = 0, rssi: Int? = nil, peerAddress: String? = nil) -> LinkID? {
        guard open.count < maxConnections + spareSlots else {
            pending.append(.refusedBusy)
            return nil
        }
        let link = LinkID(nextLink)
        nextLink += 1
        open[link] = LinkFacts(transport: "memory", peerAddress: peerAddress, rssi: rssi, connectedAtMillis: nowMillis)
        pending.append(.connected(link))
        return link
    }

    /// A message from the phone on `link` (ignored once the link is closed, as a radio would).
    public func deliver(_ message: Bytes, from link: LinkID) {
        guard open[link] != nil else { return }
        pending.append(.message(link, message))
    }

    /// The phone's side ends the link.
    public func disconnect(_ link: LinkID, reason: LinkCloseReason = .peerClosed) {
        guard open.removeValue(forKey: link) != nil else { return }
        pending.append(.closed(link, reason))
    }

    /// Changes what the radio reports for `link`.
    public func setRSSI(_ rssi: Int?, for link: LinkID) { open[link]?.rssi = rssi }

    /// What the car sent on `link` since the last call, oldest first.
    public func takeSent(_ link: LinkID) -> [Bytes] {
        defer { sent[link] = nil }
        return sent[link] ?? []
    }
}

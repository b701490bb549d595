// The car's side of the phone link, whatever carries it: the Unix-socket simulator
// (`--simulate`, fast tests), an in-memory twin (in-process tests of CarService) or BlueZ
// (a GATT characteristic over Bluetooth LE). The agent's loop polls `pollSet()`, hands the
// results to `process`, and reacts to the events; it never knows which backend it drives.
import Protocol

/// Why a link ended (as the server saw it; links the caller closed itself report nothing).
public enum LinkCloseReason: Equatable, Sendable, CustomStringConvertible {
    /// The phone hung up (a socket close; over BLE a disconnect, ECONNRESET).
    case peerClosed
    /// The radio link was lost (BLE supervision timeout: ETIMEDOUT).
    case linkLost
    /// Nothing arrived from the phone for longer than the link's idle timeout (a vanished
    /// phone is not always reported by the controller).
    case idleTimeout(millis: UInt64)
    /// A length header or fragment broke the transport's framing.
    case malformedFrame(String)
    case outputOverflow
    /// The adapter went away or was powered off.
    case adapterDown
    case ioError(String)

    public var description: String {
        switch self {
        case .peerClosed: return "peer closed"
        case .linkLost: return "link lost"
        case .idleTimeout(let millis): return "idle for \(millis / 1000) s"
        case .malformedFrame(let error): return "malformed frame: \(error)"
        case .outputOverflow: return "peer stopped reading"
        case .adapterDown: return "adapter down"
        case .ioError(let what): return "I/O error: \(what)"
        }
    }

    /// A routine end of a session (logged at debug), as opposed to news: a phone hanging up.
    /// A lost radio link or an idle phone is worth a line (a car that keeps losing links has
    /// an antenna or interference problem).
    public var isRoutine: Bool { self == .peerClosed }
}

public enum LinkEvent: Equatable, Sendable {
    case connected(LinkID)
    case message(LinkID, Bytes)
    /// The link is gone (not reported for links the caller closed itself).
    case closed(LinkID, LinkCloseReason)
    /// A connection over the server's hard limit (`maxConnections` plus its spare slots) was
    /// answered `busy` and closed.
    case refusedBusy
}

/// What the server knows about one link beyond its messages (console, proximity).
public struct LinkFacts: Equatable, Sendable {
    /// "unix", "memory" or "ble".
    public var transport: String
    /// The peer's address when the transport has one (BLE: as the controller reported it).
    public var peerAddress: String?
    /// Received signal strength in dBm, when the transport measures it (nil: unknown).
    public var rssi: Int?
    /// The negotiated ATT MTU (BLE only).
    public var mtu: Int?
    /// When the link connected (monotonic milliseconds).
    public var connectedAtMillis: UInt64

    public init(transport: String, peerAddress: String? = nil, rssi: Int? = nil, mtu: Int? = nil, connectedAtMillis: UInt64) {
        self.transport = transport
        self.peerAddress = peerAddress
        self.rssi = rssi
        self.mtu = mtu
        self.connectedAtMillis = connectedAtMillis
    }
}

public protocol LinkServer: AnyObject {
    /// Where phones reach this server, for the start-up line ("unix:/path", "ble hci0 ...").
    var endpointDescription: String { get }
    /// Links at once. A server with a spare slot accepts one more and leaves the choice to the
    /// agent (it closes a link without a session, or the newcomer); otherwise one more is
    /// refused `busy`.
    var maxConnections: Int { get }
    /// Open links, oldest first.
    var links: [LinkID] { get }
    /// Whether `link` is still connected (messages already read for a closed link are moot).
    func isOpen(_ link: LinkID) -> Bool
    /// When `link` connected (the `nowMillis` of the `process` call that accepted it).
    func connectedAt(_ link: LinkID) -> UInt64?
    /// RSSI, address, MTU of an open link.
    func facts(of link: LinkID) -> LinkFacts?
    /// What to poll this round.
    func pollSet() -> [(FileDescriptor, PollEvents)]
    /// When the server wants a round even if none of its descriptors is ready (idle timeouts,
    /// advertising retries, queued in-memory events); nil: only when ready.
    func nextDeadline() -> UInt64?
    /// Handles the poll results for the last `pollSet()`, in the same order.
    func process(_ results: [PollEvents], nowMillis: UInt64) -> [LinkEvent]
    /// Sends `message`; the close event if the link had to be dropped, nil otherwise (also for
    /// an unknown link).
    func send(_ message: Bytes, to link: LinkID) -> LinkEvent?
    /// Closes `link` after one last attempt to send its queued output. No event follows.
    func close(_ link: LinkID)
    /// Lines for the agent's log about the transport itself (adapter powered, advertising
    /// re-added, a failed management command), gathered since the last call.
    func takeNotices() -> [String]
    /// Closes every link and stops serving. Idempotent: start-up failures and the normal stop
    /// may both call it.
    func shutdown()
}

extension LinkServer {
    /// Transports with nothing to report beyond their events.
    public func takeNotices() -> [String] { [] }
}

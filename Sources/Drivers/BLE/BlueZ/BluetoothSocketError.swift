// Typed failures of the Bluetooth sockets, with the errnos that need a specific remedy named.
#if canImport(Glibc)
import Glibc
#endif

public enum BluetoothSocketError: Error, Equatable, Sendable, CustomStringConvertible {
    /// EAFNOSUPPORT: this kernel has no Bluetooth (or the bluetooth module is not loaded).
    case bluetoothUnavailable
    /// EPERM/EACCES: the control channel and binding need CAP_NET_ADMIN / CAP_NET_BIND_SERVICE.
    case permissionDenied(operation: String)
    /// ENODEV/EADDRNOTAVAIL: no adapter with that index or address.
    case noSuchAdapter(operation: String)
    /// The connect deadline passed before the link came up.
    case connectTimedOut
    /// The link could not be made, or ended, for `reason`.
    case linkEnded(LinkEndReason)
    /// A packet bigger than the buffer (it was discarded).
    case oversizedPacket(length: Int, limit: Int)
    case system(Errno)

    /// Maps an errno from socket/bind/listen/setsockopt to the case a caller can act on.
    static func from(_ error: Errno) -> BluetoothSocketError {
        switch error.rawValue {
        case EAFNOSUPPORT, EPROTONOSUPPORT: return .bluetoothUnavailable
        case EPERM, EACCES: return .permissionDenied(operation: error.operation)
        case ENODEV, EADDRNOTAVAIL: return .noSuchAdapter(operation: error.operation)
        default: return .system(error)
        }
    }

    static func current(_ operation: String) -> BluetoothSocketError { from(Errno.current(operation)) }

    public var description: String {
        switch self {
        case .bluetoothUnavailable: return "this kernel has no Bluetooth support (socket(AF_BLUETOOTH): EAFNOSUPPORT)"
        case .permissionDenied(let operation): return "\(operation): permission denied (needs CAP_NET_ADMIN; run as root or grant the capability)"
        case .noSuchAdapter(let operation): return "\(operation): no such Bluetooth adapter"
        case .connectTimedOut: return "L2CAP connect timed out"
        case .linkEnded(let reason): return "link ended: \(reason)"
        case .oversizedPacket(let length, let limit): return "packet of \(length) bytes exceeds buffer of \(limit)"
        case .system(let errno): return errno.description
        }
    }
}

/// Why an L2CAP link is over. The first two are normal ends of a session.
public enum LinkEndReason: Equatable, Sendable, CustomStringConvertible {
    /// ETIMEDOUT: supervision timeout, the phone walked away or its radio went off.
    case linkLost
    /// ECONNRESET (or an orderly close): the peer, or our own adapter powering off, ended it.
    case peerClosed
    /// ENOTCONN/EPIPE: the socket is no longer connected.
    case notConnected
    /// EHOSTDOWN/EHOSTUNREACH: the peer was not reachable (connect) or went away.
    case hostDown
    /// ECONNREFUSED: the peer refused the connection.
    case refused
    /// ENETDOWN/ENODEV: the adapter went away (unplugged, rfkill).
    case adapterDown
    case other(Errno)

    /// The reason for an errno from recv/send/connect; nil when it is not a link end (EAGAIN).
    public static func from(errno code: Int32, operation: String) -> LinkEndReason? {
        switch code {
        case ETIMEDOUT: return .linkLost
        case ECONNRESET, ECONNABORTED: return .peerClosed
        case ENOTCONN, EPIPE: return .notConnected
        case EHOSTDOWN, EHOSTUNREACH: return .hostDown
        case ECONNREFUSED: return .refused
        case ENETDOWN, ENODEV: return .adapterDown
        case EAGAIN, EINTR: return nil
        default: return .other(Errno(code, operation))
        }
    }

    public var description: String {
        switch self {
        case .linkLost: return "link lost (supervision timeout)"
        case .peerClosed: return "closed by peer"
        case .notConnected: return "not connected"
        case .hostDown: return "peer unreachable"
        case .refused: return "connection refused"
        case .adapterDown: return "adapter down"
        case .other(let errno): return errno.description
        }
    }
}

// One connected ATT channel: PDU in, PDU out, and the link facts (HCI handle, security level).
#if canImport(Glibc)
import Glibc
#endif
import CBluetooth

public enum L2CAPReceive: Equatable, Sendable {
    case pdu([UInt8])
    case wouldBlock
    case ended(LinkEndReason)
}

public enum L2CAPSend: Equatable, Sendable {
    case sent
    /// The socket buffer is full: nothing went out, the caller keeps the PDU queued.
    case wouldBlock
    case ended(LinkEndReason)
}

public struct L2CAPConnection: Sendable {
    /// Poll for `.readable`; non-blocking.
    public let descriptor: FileDescriptor
    public let peer: BluetoothAddress
    public let peerType: BluetoothAddressType

    /// ATT PDUs on LE are at most 517 bytes (MTU); the rest is headroom.
    public static let receiveLimit = 2048

    public init(descriptor: FileDescriptor, peer: BluetoothAddress, peerType: BluetoothAddressType) {
        self.descriptor = descriptor
        self.peer = peer
        self.peerType = peerType
    }

    public func close() { descriptor.close() }

    /// Phone side: binds CID 4 on the local adapter, connects to the car and waits (poll for
    /// writable, then SO_ERROR) until `timeoutMillis` passes.
    public static func connectATT(local: BluetoothAddress, localType: BluetoothAddressType = .lePublic,
                                  peer: BluetoothAddress, peerType: BluetoothAddressType,
                                  timeoutMillis: Int32) throws(BluetoothSocketError) -> L2CAPConnection {
        let fd = try L2CAPSocket.boundSocket(local: local, type: localType, cid: L2CAPSocket.attCID)
        do throws(BluetoothSocketError) {
            var remote = L2CAPSocket.address(peer, type: peerType, cid: L2CAPSocket.attCID)
            let result = withUnsafePointer(to: &remote) {
                $0.withMemoryRebound(to: sockaddr.self, capacity: 1) { Glibc.connect(fd.rawValue, $0, socklen_t(MemoryLayout<sockaddr_l2>.size)) }
            }
            if result != 0 {
                let code = errno
                guard code == EINPROGRESS || code == EAGAIN else { throw linkError(code, "connect L2CAP") }
                let ready: [PollEvents]
                do throws(Errno) {
                    ready = try Poll.wait([(fd, .writable)], timeoutMillis: timeoutMillis)
                } catch {
                    throw .from(error)
                }
                guard let events = ready.first, !events.isEmpty else { throw .connectTimedOut }
                var pending: Int32 = 0
                var length = socklen_t(MemoryLayout<Int32>.size)
                guard getsockopt(fd.rawValue, SOL_SOCKET, SO_ERROR, &pending, &length) == 0 else {
                    throw .current("getsockopt SO_ERROR")
                }
                if pending != 0 { throw linkError(pending, "connect L2CAP") }
            }
        } catch {
            fd.close()
            throw error
        }
        return L2CAPConnection(descriptor: fd, peer: peer, peerType: peerType)
    }

    private static func linkError(_ code: Int32, _ operation: String) -> BluetoothSocketError {
        // On connect, ETIMEDOUT means the car never answered (page/connect timeout), not link loss.
        if code == ETIMEDOUT { return .connectTimedOut }
        if let reason = LinkEndReason.from(errno: code, operation: operation), reason != .other(Errno(code, operation)) {
            return .linkEnded(reason)
        }
        return .from(Errno(code, operation))
    }

    /// Receives one PDU. A PDU larger than the buffer is reported, not silently cut: MSG_TRUNC
    /// makes recv return the real length on a SOCK_SEQPACKET socket.
    public func receivePDU() throws(BluetoothSocketError) -> L2CAPReceive {
        var buffer = [UInt8](repeating: 0, count: Self.receiveLimit)
        while true {
            let n = buffer.withUnsafeMutableBytes { Glibc.recv(descriptor.rawValue, $0.baseAddress, $0.count, Int32(MSG_TRUNC)) }
            if n > Self.receiveLimit { throw .oversizedPacket(length: n, limit: Self.receiveLimit) }
            if n > 0 { return .pdu(Array(buffer.prefix(n))) }
            if n == 0 { return .ended(.peerClosed) }
            let code = errno
            if code == EINTR { continue }
            if code == EAGAIN || code == EWOULDBLOCK { return .wouldBlock }
            return .ended(LinkEndReason.from(errno: code, operation: "recv L2CAP") ?? .notConnected)
        }
    }

    /// Sends one PDU whole (SEQPACKET sends are atomic), never raising SIGPIPE.
    public func sendPDU(_ pdu: [UInt8]) -> L2CAPSend {
        while true {
            let n = pdu.withUnsafeBytes { Glibc.send(descriptor.rawValue, $0.baseAddress, $0.count, Int32(MSG_NOSIGNAL)) }
            if n >= 0 { return .sent }
            let code = errno
            if code == EINTR { continue }
            if code == EAGAIN || code == EWOULDBLOCK { return .wouldBlock }
            return .ended(LinkEndReason.from(errno: code, operation: "send L2CAP") ?? .notConnected)
        }
    }

    /// The HCI connection handle (for HCI-level queries such as Read RSSI).
    public func connectionHandle() throws(BluetoothSocketError) -> UInt16 {
        var info = l2cap_conninfo()
        var length = socklen_t(MemoryLayout<l2cap_conninfo>.size)
        guard getsockopt(descriptor.rawValue, SOL_L2CAP, L2CAP_CONNINFO, &info, &length) == 0 else {
            throw .current("getsockopt L2CAP_CONNINFO")
        }
        return info.hci_handle
    }

    /// The link's current security level; it rises once pairing/encryption completes.
    public func securityLevel() throws(BluetoothSocketError) -> BluetoothSecurityLevel {
        var security = bt_security()
        var length = socklen_t(MemoryLayout<bt_security>.size)
        guard getsockopt(descriptor.rawValue, SOL_BLUETOOTH, BT_SECURITY, &security, &length) == 0 else {
            throw .current("getsockopt BT_SECURITY")
        }
        return BluetoothSecurityLevel(rawValue: security.level) ?? .sdp
    }

    /// Raising the level on an accepted socket makes the peripheral send a Security Request.
    public func requestSecurity(_ level: BluetoothSecurityLevel) throws(BluetoothSocketError) {
        try L2CAPSocket.setSecurity(descriptor, level)
    }
}

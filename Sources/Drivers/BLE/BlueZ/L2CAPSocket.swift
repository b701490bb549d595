// L2CAP LE sockets on the ATT fixed channel (CID 4): the car listens, the phone side connects.
// SOCK_SEQPACKET keeps PDU boundaries, so one recv is one ATT PDU.
#if canImport(Glibc)
import Glibc
#endif
import CBluetooth

/// Link-layer security levels (BT_SECURITY_*). Note the kernel lets ATT traffic through before
/// pairing completes, so a server that needs encryption must check the level itself.
public enum BluetoothSecurityLevel: UInt8, Sendable, Comparable {
    case sdp = 0, low = 1, medium = 2, high = 3, fips = 4
    public static func < (a: Self, b: Self) -> Bool { a.rawValue < b.rawValue }
}

public enum L2CAPSocket {
    /// The ATT fixed channel.
    public static let attCID: UInt16 = 4

    /// sockaddr_l2 for an LE fixed channel: PSM 0, CID and PSM in little-endian (htobs).
    static func address(_ address: BluetoothAddress, type: BluetoothAddressType, cid: UInt16) -> sockaddr_l2 {
        var a = sockaddr_l2()
        a.l2_family = sa_family_t(AF_BLUETOOTH)
        a.l2_psm = 0
        a.l2_cid = cid.littleEndian
        a.l2_bdaddr_type = type.rawValue
        let b = address.bytes
        a.l2_bdaddr = bdaddr_t(b: (b[0], b[1], b[2], b[3], b[4], b[5]))
        return a
    }

    static func peer(from a: sockaddr_l2) -> (BluetoothAddress, BluetoothAddressType) {
        let b = a.l2_bdaddr.b
        return (BluetoothAddress(littleEndian: [b.0, b.1, b.2, b.3, b.4, b.5])!,
                BluetoothAddressType(rawValue: a.l2_bdaddr_type) ?? .lePublic)
    }

    /// A non-blocking, close-on-exec L2CAP SOCK_SEQPACKET socket bound to `local` on `cid`.
    static func boundSocket(local: BluetoothAddress, type: BluetoothAddressType, cid: UInt16) throws(BluetoothSocketError) -> FileDescriptor {
        let kind = Int32(SOCK_SEQPACKET.rawValue) | Int32(SOCK_CLOEXEC.rawValue) | Int32(SOCK_NONBLOCK.rawValue)
        let raw = socket(PF_BLUETOOTH, kind, BTPROTO_L2CAP)
        guard raw >= 0 else { throw .current("socket(AF_BLUETOOTH, BTPROTO_L2CAP)") }
        let fd = FileDescriptor(rawValue: raw)
        var a = address(local, type: type, cid: cid)
        let bound = withUnsafePointer(to: &a) {
            $0.withMemoryRebound(to: sockaddr.self, capacity: 1) { bind(raw, $0, socklen_t(MemoryLayout<sockaddr_l2>.size)) }
        }
        guard bound == 0 else {
            let failure = BluetoothSocketError.current("bind L2CAP \(local) CID \(cid)")
            fd.close()
            throw failure
        }
        return fd
    }

    static func setSecurity(_ fd: FileDescriptor, _ level: BluetoothSecurityLevel) throws(BluetoothSocketError) {
        var security = bt_security(level: level.rawValue, key_size: 0)
        guard setsockopt(fd.rawValue, SOL_BLUETOOTH, BT_SECURITY, &security, socklen_t(MemoryLayout<bt_security>.size)) == 0 else {
            throw .current("setsockopt BT_SECURITY")
        }
    }
}

/// The car's listener on CID 4. Survives adapter power cycles: after power-on the same socket
/// accepts again without rebinding.
public struct L2CAPListener: Sendable {
    /// Poll for `.readable`, then `accept()`.
    public let descriptor: FileDescriptor

    /// Binds CID 4 on `address` (`.any` for every adapter) with `type` and listens. The
    /// listener whose socket was created last gets new connections, so a bluetoothd running
    /// beside us would steal them: check `BluetoothdDetector` first.
    public static func listenATT(address: BluetoothAddress = .any, type: BluetoothAddressType = .lePublic,
                                 backlog: Int32 = 4) throws(BluetoothSocketError) -> L2CAPListener {
        let fd = try L2CAPSocket.boundSocket(local: address, type: type, cid: L2CAPSocket.attCID)
        do throws(BluetoothSocketError) {
            // Low: no pairing demanded. (Measured: on a listener this has no effect; raise it
            // on the accepted socket to make the peripheral request security.)
            try L2CAPSocket.setSecurity(fd, .low)
            guard listen(fd.rawValue, backlog) == 0 else { throw .current("listen L2CAP") }
        } catch {
            fd.close()
            throw error
        }
        return L2CAPListener(descriptor: fd)
    }

    public init(descriptor: FileDescriptor) { self.descriptor = descriptor }

    public func close() { descriptor.close() }

    /// One pending connection (non-blocking, close-on-exec) with the peer's address; nil when none.
    public func accept() throws(BluetoothSocketError) -> L2CAPConnection? {
        var peer = sockaddr_l2()
        var length = socklen_t(MemoryLayout<sockaddr_l2>.size)
        let raw: CInt
        do throws(Errno) {
            raw = try retryOnInterrupt("accept L2CAP") {
                withUnsafeMutablePointer(to: &peer) {
                    $0.withMemoryRebound(to: sockaddr.self, capacity: 1) { Glibc.accept(descriptor.rawValue, $0, &length) }
                }
            }
        } catch where [EAGAIN, EWOULDBLOCK, ECONNABORTED].contains(error.rawValue) {
            return nil
        } catch {
            throw .from(error)
        }
        let fd = FileDescriptor(rawValue: raw)
        // accept4 is hidden without _GNU_SOURCE; set the flags the same way acceptConnection does.
        do throws(Errno) {
            try fd.setNonBlockingAndCloseOnExec()
        } catch {
            fd.close()
            throw .from(error)
        }
        let (address, type) = L2CAPSocket.peer(from: peer)
        return L2CAPConnection(descriptor: fd, peer: address, peerType: type)
    }
}

// The socket layer without a Bluetooth kernel: typed errors where AF_BLUETOOTH is missing, the
// errno-to-link-end mapping, PDU I/O over a SOCK_SEQPACKET socketpair, and sockaddr layouts.
import XCTest
import Glibc
import CBluetooth
@testable import Drivers

final class BlueZSocketTests: XCTestCase {
    /// True when this kernel has Bluetooth sockets (the VM lane); these tests are for the others.
    private var kernelHasBluetooth: Bool {
        let fd = socket(PF_BLUETOOTH, Int32(SOCK_SEQPACKET.rawValue), BTPROTO_L2CAP)
        if fd >= 0 { close(fd); return true }
        return errno != EAFNOSUPPORT
    }

    func testMgmtSocketWithoutBluetoothIsATypedError() throws {
        try XCTSkipIf(kernelHasBluetooth, "this kernel has Bluetooth")
        XCTAssertThrowsError(try MgmtSocket.open()) { error in
            XCTAssertEqual(error as? BluetoothSocketError, .bluetoothUnavailable)
        }
    }

    func testL2CAPListenAndConnectWithoutBluetoothAreTypedErrors() throws {
        try XCTSkipIf(kernelHasBluetooth, "this kernel has Bluetooth")
        XCTAssertThrowsError(try L2CAPListener.listenATT()) { error in
            XCTAssertEqual(error as? BluetoothSocketError, .bluetoothUnavailable)
        }
        XCTAssertThrowsError(try L2CAPConnection.connectATT(local: .any, peer: MgmtVectors.hci0Address,
                                                             peerType: .lePublic, timeoutMillis: 10)) { error in
            XCTAssertEqual(error as? BluetoothSocketError, .bluetoothUnavailable)
        }
    }

    func testErrnoMapsToLinkEndReasons() {
        XCTAssertEqual(LinkEndReason.from(errno: ETIMEDOUT, operation: "recv"), .linkLost)
        XCTAssertEqual(LinkEndReason.from(errno: ECONNRESET, operation: "recv"), .peerClosed)
        XCTAssertEqual(LinkEndReason.from(errno: ENOTCONN, operation: "send"), .notConnected)
        XCTAssertEqual(LinkEndReason.from(errno: EPIPE, operation: "send"), .notConnected)
        XCTAssertEqual(LinkEndReason.from(errno: EHOSTDOWN, operation: "connect"), .hostDown)
        XCTAssertEqual(LinkEndReason.from(errno: ECONNREFUSED, operation: "connect"), .refused)
        XCTAssertEqual(LinkEndReason.from(errno: ENETDOWN, operation: "recv"), .adapterDown)
        XCTAssertNil(LinkEndReason.from(errno: EAGAIN, operation: "recv"))
        XCTAssertEqual(LinkEndReason.from(errno: EIO, operation: "recv"), .other(Errno(EIO, "recv")))
        XCTAssertEqual(BluetoothSocketError.from(Errno(EPERM, "bind")), .permissionDenied(operation: "bind"))
        XCTAssertEqual(BluetoothSocketError.from(Errno(EAFNOSUPPORT, "socket")), .bluetoothUnavailable)
    }

    /// An L2CAPConnection over one end of an AF_UNIX SOCK_SEQPACKET pair: same boundaries.
    private func pair() throws -> (L2CAPConnection, FileDescriptor) {
        var fds: [Int32] = [0, 0]
        let type = Int32(SOCK_SEQPACKET.rawValue) | Int32(SOCK_NONBLOCK.rawValue) | Int32(SOCK_CLOEXEC.rawValue)
        guard socketpair(AF_UNIX, type, 0, &fds) == 0 else { throw Errno.current("socketpair") }
        return (L2CAPConnection(descriptor: FileDescriptor(rawValue: fds[0]), peer: MgmtVectors.phoneAddress, peerType: .lePublic),
                FileDescriptor(rawValue: fds[1]))
    }

    func testPDUsKeepTheirBoundaries() throws {
        let (connection, other) = try pair()
        defer { connection.close(); other.close() }
        XCTAssertEqual(try connection.receivePDU(), .wouldBlock)
        // ATT Exchange MTU Request, then a second PDU: two receives, not one stream.
        XCTAssertEqual(try other.sendSome([0x02, 0x00, 0x02][...]), 3)
        XCTAssertEqual(try other.sendSome([0x0A, 0x03, 0x00][...]), 3)
        XCTAssertEqual(try connection.receivePDU(), .pdu([0x02, 0x00, 0x02]))
        XCTAssertEqual(try connection.receivePDU(), .pdu([0x0A, 0x03, 0x00]))
        XCTAssertEqual(connection.sendPDU([0x03, 0x00, 0x02]), .sent)
        XCTAssertEqual(try other.receive(upTo: 64), .data([0x03, 0x00, 0x02]))
    }

    func testOversizedPDUIsATypedErrorNotATruncation() throws {
        let (connection, other) = try pair()
        defer { connection.close(); other.close() }
        let big = [UInt8](repeating: 0x52, count: L2CAPConnection.receiveLimit + 10)
        XCTAssertEqual(try other.sendSome(big[...]), big.count)
        XCTAssertThrowsError(try connection.receivePDU()) { error in
            XCTAssertEqual(error as? BluetoothSocketError, .oversizedPacket(length: big.count, limit: L2CAPConnection.receiveLimit))
        }
    }

    func testPeerCloseEndsTheLinkAndSendReportsIt() throws {
        let (connection, other) = try pair()
        defer { connection.close() }
        other.close()
        XCTAssertEqual(try connection.receivePDU(), .ended(.peerClosed))
        XCTAssertEqual(connection.sendPDU([0x01]), .ended(.notConnected)) // EPIPE, and no SIGPIPE
    }

    func testSendWouldBlockWhenTheBufferIsFull() throws {
        let (connection, other) = try pair()
        defer { connection.close(); other.close() }
        var result = L2CAPSend.sent
        for _ in 0..<100_000 where result == .sent { result = connection.sendPDU([UInt8](repeating: 0, count: 512)) }
        XCTAssertEqual(result, .wouldBlock)
    }

    func testSockaddrL2ForATT() {
        let address = L2CAPSocket.address(MgmtVectors.hci0Address, type: .leRandom, cid: L2CAPSocket.attCID)
        XCTAssertEqual(MemoryLayout<sockaddr_l2>.size, 14)
        XCTAssertEqual(Int32(address.l2_family), AF_BLUETOOTH)
        XCTAssertEqual(address.l2_psm, 0)
        XCTAssertEqual(UInt16(littleEndian: address.l2_cid), 4)
        XCTAssertEqual(address.l2_bdaddr_type, 2)
        XCTAssertEqual(address.l2_bdaddr.b.4, 0xAA) // little-endian: printed second byte
        let (peer, type) = L2CAPSocket.peer(from: address)
        XCTAssertEqual(peer, MgmtVectors.hci0Address)
        XCTAssertEqual(type, .leRandom)
    }
}

// The management control channel: a raw HCI socket bound to HCI_DEV_NONE on
// HCI_CHANNEL_CONTROL. Each write is one command, each read one whole event. Binding needs
// CAP_NET_ADMIN. Events of every controller and from commands other processes send arrive
// here too, which is how New Settings and Advertising Removed reach us.
#if canImport(Glibc)
import Glibc
#endif
import CBluetooth

public struct MgmtSocket: Sendable {
    /// Poll for `.readable`, then `receiveEvents()`.
    public let descriptor: FileDescriptor

    /// Large enough for any event we parse (controller info is 286 bytes, an extended
    /// advertising report a few hundred); a larger one is cut and then fails length checks.
    static let bufferSize = 4096

    /// Opens a non-blocking, close-on-exec control socket.
    public static func open() throws(BluetoothSocketError) -> MgmtSocket {
        let type = Int32(SOCK_RAW.rawValue) | Int32(SOCK_CLOEXEC.rawValue) | Int32(SOCK_NONBLOCK.rawValue)
        let raw = socket(PF_BLUETOOTH, type, BTPROTO_HCI)
        guard raw >= 0 else { throw .current("socket(AF_BLUETOOTH, BTPROTO_HCI)") }
        let fd = FileDescriptor(rawValue: raw)
        var address = sockaddr_hci()
        address.hci_family = sa_family_t(AF_BLUETOOTH)
        address.hci_dev = UInt16(HCI_DEV_NONE)
        address.hci_channel = UInt16(HCI_CHANNEL_CONTROL)
        let bound = withUnsafePointer(to: &address) {
            $0.withMemoryRebound(to: sockaddr.self, capacity: 1) {
                bind(raw, $0, socklen_t(MemoryLayout<sockaddr_hci>.size))
            }
        }
        guard bound == 0 else {
            let failure = BluetoothSocketError.current("bind HCI_CHANNEL_CONTROL")
            fd.close()
            throw failure
        }
        return MgmtSocket(descriptor: fd)
    }

    public init(descriptor: FileDescriptor) { self.descriptor = descriptor }

    public func close() { descriptor.close() }

    /// Sends one command; false when the socket buffer is full (retry after the next readable).
    @discardableResult
    public func send(_ command: MgmtCommand) throws(BluetoothSocketError) -> Bool {
        let bytes = command.encoded
        do throws(Errno) {
            let sent = try descriptor.sendSome(bytes[...])
            return sent == bytes.count
        } catch {
            throw .from(error)
        }
    }

    /// Reads every event waiting (non-blocking), skipping unknown event codes. A malformed
    /// event is skipped too and counted in `malformed`, so one bad packet cannot stall the loop.
    public func receiveEvents(malformed: inout Int) throws(BluetoothSocketError) -> [MgmtEvent] {
        var events = [MgmtEvent]()
        while true {
            let received: SocketReceive
            do throws(Errno) {
                received = try descriptor.receive(upTo: Self.bufferSize)
            } catch {
                throw .from(error)
            }
            switch received {
            case .wouldBlock, .closed:
                return events
            case .data(let packet):
                do throws(MgmtError) {
                    if let event = try MgmtEvent.parse(packet) { events.append(event) }
                } catch {
                    malformed += 1
                }
            }
        }
    }
}

// swtpm's TCP server port: raw TPM commands in, raw responses out, on one connection kept
// open (tpm2-tss's swtpm TCTI sends the same bytes; swtpm serves one client at a time).
// Send and receive are bounded by socket timeouts.
#if canImport(Glibc)
import Glibc
// The socket constants may be owned by CBluetooth's module in a whole-module build (see
// UnixSocket.swift): imported so they stay visible.
import CBluetooth
#endif
import Protocol

final class TPM2SocketTransport: TPM2Transport {
    private var fd: FileDescriptor?
    let endpoint: String
    static let timeoutMillis = 60_000

    init(host: String, port: UInt16) throws(TPM2TransportError) {
        endpoint = "\(host):\(port)"
        fd = try TPM2SocketAddress.connect(host: host, port: port, timeoutMillis: Self.timeoutMillis)
    }

    func exchange(_ command: Bytes) throws(TPM2TransportError) -> Bytes {
        guard let fd else { throw TPM2TransportError(detail: "\(endpoint): closed") }
        var sent = 0
        while sent < command.count {
            do {
                let n = try fd.sendSome(command[sent...])
                guard n > 0 else { throw TPM2TransportError(detail: "\(endpoint): send timed out") }
                sent += n
            } catch let error as TPM2TransportError {
                throw error
            } catch {
                throw TPM2TransportError(detail: "\(endpoint): \(error)")
            }
        }
        var response = try receive(fd, TPM2ResponseFrame.headerSize)
        let size = try TPM2ResponseFrame.size(ofHeader: response)
        response += try receive(fd, size - TPM2ResponseFrame.headerSize)
        return response
    }

    /// Exactly `count` bytes, or a transport error (peer closed, reset, timeout).
    private func receive(_ fd: FileDescriptor, _ count: Int) throws(TPM2TransportError) -> Bytes {
        var bytes: Bytes = []
        while bytes.count < count {
            let outcome: SocketReceive
            do { outcome = try fd.receive(upTo: count - bytes.count) } catch {
                throw TPM2TransportError(detail: "\(endpoint): \(error)")
            }
            switch outcome {
            case .data(let chunk): bytes += chunk
            case .closed: throw TPM2TransportError(detail: "\(endpoint): connection closed by the TPM")
            case .wouldBlock: throw TPM2TransportError(detail: "\(endpoint): no response within \(Self.timeoutMillis / 1000) s")
            }
        }
        return bytes
    }

    func close() {
        fd?.close()
        fd = nil
    }

    deinit { close() }
}

/// Numeric IPv4/IPv6 addresses only: name lookup in a static executable would load NSS modules.
enum TPM2SocketAddress {
    static func isNumeric(_ host: String) -> Bool {
        var v4 = in_addr()
        var v6 = in6_addr()
        return inet_pton(AF_INET, host, &v4) == 1 || inet_pton(AF_INET6, host, &v6) == 1
    }

    static func connect(host: String, port: UInt16, timeoutMillis: Int) throws(TPM2TransportError) -> FileDescriptor {
        var v4 = sockaddr_in()
        var v6 = sockaddr_in6()
        let family: Int32
        if inet_pton(AF_INET, host, &v4.sin_addr) == 1 {
            family = AF_INET
            v4.sin_family = sa_family_t(AF_INET)
            v4.sin_port = port.bigEndian
        } else if inet_pton(AF_INET6, host, &v6.sin6_addr) == 1 {
            family = AF_INET6
            v6.sin6_family = sa_family_t(AF_INET6)
            v6.sin6_port = port.bigEndian
        } else {
            throw TPM2TransportError(detail: "\(host): not an IP address")
        }
        let raw = socket(family, Int32(SOCK_STREAM.rawValue) | Int32(SOCK_CLOEXEC.rawValue), 0)
        guard raw >= 0 else { throw TPM2TransportError(detail: "socket: \(Errno.current("socket"))") }
        let fd = FileDescriptor(rawValue: raw)
        var one: Int32 = 1
        _ = setsockopt(raw, Int32(IPPROTO_TCP), TCP_NODELAY, &one, socklen_t(MemoryLayout<Int32>.size))
        let result: Int32 = family == AF_INET
            ? withUnsafePointer(to: &v4) { $0.withMemoryRebound(to: sockaddr.self, capacity: 1) { Glibc.connect(raw, $0, socklen_t(MemoryLayout<sockaddr_in>.size)) } }
            : withUnsafePointer(to: &v6) { $0.withMemoryRebound(to: sockaddr.self, capacity: 1) { Glibc.connect(raw, $0, socklen_t(MemoryLayout<sockaddr_in6>.size)) } }
        guard result == 0 else {
            let failure = Errno.current("connect \(host):\(port)")
            fd.close()
            throw TPM2TransportError(detail: "\(failure)")
        }
        do { try fd.setSocketTimeouts(milliseconds: timeoutMillis) } catch {
            fd.close()
            throw TPM2TransportError(detail: "\(error)")
        }
        return fd
    }
}

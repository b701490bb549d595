// Socket I/O on FileDescriptor: accept, send without SIGPIPE, receive that tells "nothing yet"
// from "peer closed", and kernel timeouts for blocking clients.
#if canImport(Glibc)
import Glibc
// bluetooth.h pulls <sys/socket.h> in textually, so in a whole-module (release) build the
// socket constants (SOCK_STREAM, MSG_NOSIGNAL) may be owned by CBluetooth's module, not Glibc:
// import it here so they stay visible whichever header the compiler saw first.
import CBluetooth
#endif

/// The outcome of one receive on a socket.
public enum SocketReceive: Equatable, Sendable {
    case data([UInt8])
    /// Non-blocking socket with nothing to read, or a blocking one whose receive timeout passed.
    case wouldBlock
    /// The peer closed its side (or reset the connection).
    case closed
}

extension FileDescriptor {
    /// Accepts one pending connection as a non-blocking, close-on-exec descriptor; nil when none
    /// is pending (the listener is non-blocking) or the client gave up before we accepted.
    public func acceptConnection() throws(Errno) -> FileDescriptor? {
        let result: CInt
        do throws(Errno) {
            result = try retryOnInterrupt("accept") { accept(rawValue, nil, nil) }
        } catch where [EAGAIN, EWOULDBLOCK, ECONNABORTED].contains(error.rawValue) {
            return nil
        }
        let connection = FileDescriptor(rawValue: result)
        do throws(Errno) {
            try connection.setNonBlockingAndCloseOnExec()
        } catch {
            connection.close()
            throw error
        }
        return connection
    }

    /// One send(2) with MSG_NOSIGNAL (a closed peer is EPIPE, never SIGPIPE). Returns how many
    /// bytes went out: 0 when a non-blocking socket's buffer is full or a send timeout passed.
    public func sendSome(_ bytes: ArraySlice<UInt8>) throws(Errno) -> Int {
        guard !bytes.isEmpty else { return 0 }
        do throws(Errno) {
            return try retryOnInterrupt("send") {
                bytes.withUnsafeBytes { Glibc.send(rawValue, $0.baseAddress, $0.count, Int32(MSG_NOSIGNAL)) }
            }
        } catch where error.rawValue == EAGAIN || error.rawValue == EWOULDBLOCK {
            return 0
        }
    }

    /// One recv(2) of at most `count` bytes.
    public func receive(upTo count: Int) throws(Errno) -> SocketReceive {
        var buffer = [UInt8](repeating: 0, count: max(1, count))
        do throws(Errno) {
            let n = try retryOnInterrupt("recv") {
                buffer.withUnsafeMutableBytes { Glibc.recv(rawValue, $0.baseAddress, $0.count, 0) }
            }
            return n == 0 ? .closed : .data(Array(buffer.prefix(n)))
        } catch where error.rawValue == EAGAIN || error.rawValue == EWOULDBLOCK {
            return .wouldBlock
        } catch where error.rawValue == ECONNRESET {
            return .closed
        }
    }

    /// SO_RCVTIMEO and SO_SNDTIMEO for a blocking socket: a receive or send that waits longer
    /// returns `.wouldBlock` / 0 instead of hanging.
    public func setSocketTimeouts(milliseconds: Int) throws(Errno) {
        var timeout = timeval(tv_sec: milliseconds / 1000, tv_usec: (milliseconds % 1000) * 1000)
        for option in [SO_RCVTIMEO, SO_SNDTIMEO] {
            guard setsockopt(rawValue, SOL_SOCKET, option, &timeout, socklen_t(MemoryLayout<timeval>.size)) == 0 else {
                throw Errno.current("setsockopt timeout")
            }
        }
    }
}

// poll(2) and non-blocking read/write on FileDescriptor, for the console: it must never block
// the agent's loop, even when the other end of the line stops reading or sends nothing.
#if canImport(Glibc)
import Glibc
#endif

extension FileDescriptor {
    /// Waits up to `timeoutMillis` (negative: forever) for `events`; returns revents, 0 on timeout.
    /// An interrupted poll restarts with the full timeout (retryOnInterrupt), which only matters
    /// under a signal storm; callers pass short timeouts.
    func poll(events: Int16, timeoutMillis: Int32) throws(SerialError) -> Int16 {
        var request = pollfd(fd: rawValue, events: events, revents: 0)
        let ready = try serialIO { try retryOnInterrupt("poll") { Glibc.poll(&request, 1, timeoutMillis) } }
        return ready == 0 ? 0 : request.revents
    }

    /// Reads what is available, at most `count` bytes. nil: nothing available (EAGAIN);
    /// empty: end of file. EIO (a pseudo-terminal whose other side closed) is end of file too.
    func readAvailable(upTo count: Int) throws(SerialError) -> [UInt8]? {
        do {
            return try read(upTo: count)
        } catch let error as Errno where error.rawValue == EAGAIN || error.rawValue == EWOULDBLOCK {
            return nil
        } catch let error as Errno where error.rawValue == EIO {
            return []
        } catch let error as Errno {
            throw .ioFailed(errno: error)
        } catch {
            throw .ioFailed(errno: Errno(EIO, "read"))
        }
    }

    /// One write(2); returns how many bytes went out, 0 when the descriptor would block.
    func writeSome(_ bytes: ArraySlice<UInt8>) throws(SerialError) -> Int {
        do {
            return try bytes.withUnsafeBytes { raw in
                try retryOnInterrupt("write") { Glibc.write(rawValue, raw.baseAddress, raw.count) }
            }
        } catch let error as Errno where error.rawValue == EAGAIN || error.rawValue == EWOULDBLOCK {
            return 0
        } catch let error as Errno {
            throw .ioFailed(errno: error)
        } catch {
            throw .ioFailed(errno: Errno(EIO, "write"))
        }
    }

    /// Sets O_NONBLOCK and FD_CLOEXEC (openpty returns descriptors with neither).
    func makeNonBlockingAndCloseOnExec(nonBlocking: Bool) throws(SerialError) {
        let flags = fcntl(rawValue, F_GETFL)
        guard flags >= 0, fcntl(rawValue, F_SETFL, nonBlocking ? flags | O_NONBLOCK : flags) == 0,
              fcntl(rawValue, F_SETFD, FD_CLOEXEC) == 0 else {
            throw .ioFailed(errno: Errno.current("fcntl"))
        }
    }
}

/// Maps the untyped Errno thrown by the System layer to a SerialError.
func serialIO<T>(_ body: () throws -> T) throws(SerialError) -> T {
    do {
        return try body()
    } catch let error as Errno {
        throw .ioFailed(errno: error)
    } catch {
        throw .ioFailed(errno: Errno(EIO, "\(error)"))
    }
}

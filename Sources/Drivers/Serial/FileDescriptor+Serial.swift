// Poll and non-blocking read/write on FileDescriptor (through the System layer), for the console: it must never block
// the agent's loop, even when the other end of the line stops reading or sends nothing.
#if canImport(Glibc)
import Glibc
#endif

extension FileDescriptor {
    /// Waits up to `timeoutMillis` (negative: forever) for `events`; returns revents, 0 on timeout.
    /// An interrupted poll restarts with the full timeout (Poll.wait), which only matters
    /// under a signal storm; callers pass short timeouts.
    func poll(events: Int16, timeoutMillis: Int32) throws(SerialError) -> Int16 {
        do throws(Errno) {
            return try Poll.wait([(self, PollEvents(rawValue: events))], timeoutMillis: timeoutMillis)[0].rawValue
        } catch {
            throw .ioFailed(errno: error)
        }
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
        do throws(Errno) {
            return try bytes.withUnsafeBytes { raw in Result { () throws(Errno) in try write(raw) } }.get()
        } catch where error.rawValue == EAGAIN || error.rawValue == EWOULDBLOCK {
            return 0
        } catch {
            throw .ioFailed(errno: error)
        }
    }

    /// Sets O_NONBLOCK and FD_CLOEXEC (openpty returns descriptors with neither).
    func makeNonBlockingAndCloseOnExec(nonBlocking: Bool) throws(SerialError) {
        do throws(Errno) {
            try setNonBlockingAndCloseOnExec(nonBlocking: nonBlocking)
        } catch {
            throw .ioFailed(errno: error)
        }
    }
}

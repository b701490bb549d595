// fcntl(2) flags on FileDescriptor: O_NONBLOCK (status flags) and FD_CLOEXEC (descriptor
// flags), so callers never handle fcntl's -1/errno themselves.
#if canImport(Glibc)
import Glibc
#endif

extension FileDescriptor {
    /// The file status flags (F_GETFL): O_NONBLOCK, O_APPEND, the access mode.
    public func statusFlags() throws(Errno) -> CInt {
        try retryOnInterrupt("fcntl F_GETFL") { fcntl(rawValue, F_GETFL) }
    }

    /// Replaces the file status flags (F_SETFL; the kernel ignores the access mode bits).
    public func setStatusFlags(_ flags: CInt) throws(Errno) {
        _ = try retryOnInterrupt("fcntl F_SETFL") { fcntl(rawValue, F_SETFL, flags) }
    }

    /// Turns O_NONBLOCK on or off, leaving the other status flags as they are.
    public func setNonBlocking(_ enabled: Bool) throws(Errno) {
        let flags = try statusFlags()
        let wanted = enabled ? flags | O_NONBLOCK : flags & ~O_NONBLOCK
        if wanted != flags { try setStatusFlags(wanted) }
    }

    /// The descriptor flags (F_GETFD): FD_CLOEXEC.
    public func descriptorFlags() throws(Errno) -> CInt {
        try retryOnInterrupt("fcntl F_GETFD") { fcntl(rawValue, F_GETFD) }
    }

    /// Sets FD_CLOEXEC, so a child process never inherits the descriptor.
    public func setCloseOnExec() throws(Errno) {
        _ = try retryOnInterrupt("fcntl F_SETFD") { fcntl(rawValue, F_SETFD, FD_CLOEXEC) }
    }

    /// O_NONBLOCK and FD_CLOEXEC for a descriptor made by a call that cannot set them itself
    /// (pipe(2), accept(2): pipe2 and accept4 are not visible without _GNU_SOURCE). Nothing in
    /// these processes execs between the call and this, so the CLOEXEC window is harmless.
    public func setNonBlockingAndCloseOnExec(nonBlocking: Bool = true) throws(Errno) {
        if nonBlocking { try setNonBlocking(true) }
        try setCloseOnExec()
    }
}

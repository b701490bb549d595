// Who is on the other end of a Unix-domain socket: SO_PEERCRED, the credentials the kernel
// recorded when the peer connected (they cannot be forged by the peer).
#if canImport(Glibc)
import Glibc
#endif

public struct PeerCredentials: Sendable, Equatable {
    public let processID: Int32
    public let userID: UInt32
    public let groupID: UInt32
}

extension FileDescriptor {
    /// The credentials of the connected peer of a Unix-domain socket.
    public func peerCredentials() throws(Errno) -> PeerCredentials {
        // Linux `struct ucred` { pid_t pid; uid_t uid; gid_t gid; }: Swift's Glibc module does
        // not export it (it needs _GNU_SOURCE), so the same three 32-bit fields are spelled here.
        var credentials: (Int32, UInt32, UInt32) = (0, 0, 0)
        var length = socklen_t(MemoryLayout<(Int32, UInt32, UInt32)>.size)
        guard getsockopt(rawValue, SOL_SOCKET, SO_PEERCRED, &credentials, &length) == 0 else {
            throw Errno.current("getsockopt SO_PEERCRED")
        }
        guard length == 12 else { throw Errno(EINVAL, "getsockopt SO_PEERCRED: \(length) bytes, expected 12") }
        return PeerCredentials(processID: credentials.0, userID: credentials.1, groupID: credentials.2)
    }

    /// The effective user ID of this process.
    public static var effectiveUserID: UInt32 { UInt32(geteuid()) }
}

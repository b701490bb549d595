// An event's place in the audit chain: the hash of the event before it and its own hash.
import Protocol

public struct EventChainLink: Equatable, Sendable {
    /// The previous event's `hash`; 32 zero bytes (`genesis`) for the first chained event.
    public let prevHash: Bytes
    /// SHA-256 over `EventCanonical.encode(event, prevHash:)`.
    public let hash: Bytes

    public init(prevHash: Bytes, hash: Bytes) {
        self.prevHash = prevHash
        self.hash = hash
    }

    /// Where a chain starts: the database's first chained event (see docs/cloud.md).
    public static let genesis = Bytes(repeating: 0, count: SHA256.byteCount)
}

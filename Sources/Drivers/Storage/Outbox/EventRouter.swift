// Decides which outbox message an audit event becomes. Installed on CarStore by the cloud link.
//
// A protocol, not a closure type, on purpose: the store keeps the router in a Mutex and reads
// it back for every transaction. With Swift 6.3 a closure read out of a generic container
// (`Mutex<(@Sendable (StoredEvent) -> OutboxEntry?)?>.withLock { $0 }`) is wrapped in one more
// re-abstraction thunk on each read, and the chain is never collapsed: after months of reads
// (about 20 a second from the cloud thread) calling it overflows the stack. An existential
// of a protocol is copied as a plain reference, so reading it a million times costs nothing.

public protocol EventRouter: Sendable {
    /// The outbox message for `event`, or nil when it is not published.
    func route(_ event: StoredEvent) -> OutboxEntry?
}

/// A router from a function value, kept once in a final class and called through it (never
/// copied out of a generic container), for tests and one-off tools.
public final class EventRouterFunction: EventRouter {
    private let body: @Sendable (StoredEvent) -> OutboxEntry?

    public init(_ body: @escaping @Sendable (StoredEvent) -> OutboxEntry?) {
        self.body = body
    }

    public func route(_ event: StoredEvent) -> OutboxEntry? { body(event) }
}

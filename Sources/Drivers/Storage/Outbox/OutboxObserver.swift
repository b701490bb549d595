// Told after a write transaction that added outbox rows has committed, so the cloud link reads
// the outbox when there is something to read instead of on every pass (an idle car does not
// touch SQLite from the cloud thread). Called on the committing thread: it must only signal
// (an eventfd write), never block or write to the store.
//
// A protocol-typed object, like EventRouter, not a closure: the store reads it back after
// every write transaction (see EventRouter.swift for why closures in a Mutex are avoided).

public protocol OutboxObserver: Sendable {
    func outboxEnqueued()
}

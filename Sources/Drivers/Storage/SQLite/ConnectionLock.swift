// The lock that gives a Database's single connection to one thread at a time. It remembers the
// owning thread so that a transaction started from inside another one fails with a typed error
// instead of deadlocking.
#if canImport(Glibc)
import Glibc
#endif
import Synchronization

final class ConnectionLock: @unchecked Sendable {
    /// At a stable heap address (System/Lock).
    private let mutex = Lock()
    /// pthread_self() of the holder, 0 when free. Atomic because it is read before locking.
    private let owner = Atomic<UInt>(0)

    /// True when the calling thread holds the lock (a re-entrant call would deadlock).
    var isHeldByCurrentThread: Bool { owner.load(ordering: .acquiring) == UInt(pthread_self()) }

    func withLock<T>(_ body: () throws -> T) rethrows -> T {
        mutex.lock()
        owner.store(UInt(pthread_self()), ordering: .releasing)
        defer {
            owner.store(0, ordering: .releasing)
            mutex.unlock()
        }
        return try body()
    }
}

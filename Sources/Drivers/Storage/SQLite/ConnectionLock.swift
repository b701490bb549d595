// The lock that gives a Database's single connection to one thread at a time. It remembers the
// owning thread so that a transaction started from inside another one fails with a typed error
// instead of deadlocking.
#if canImport(Glibc)
import Glibc
#endif
import Synchronization

final class ConnectionLock: @unchecked Sendable {
    private let mutex: UnsafeMutablePointer<pthread_mutex_t>
    /// pthread_self() of the holder, 0 when free. Atomic because it is read before locking.
    private let owner = Atomic<UInt>(0)

    init() {
        mutex = .allocate(capacity: 1)
        mutex.initialize(to: pthread_mutex_t())
        pthread_mutex_init(mutex, nil)
    }

    deinit {
        pthread_mutex_destroy(mutex)
        mutex.deallocate()
    }

    /// True when the calling thread holds the lock (a re-entrant call would deadlock).
    var isHeldByCurrentThread: Bool { owner.load(ordering: .acquiring) == UInt(pthread_self()) }

    func withLock<T>(_ body: () throws -> T) rethrows -> T {
        pthread_mutex_lock(mutex)
        owner.store(UInt(pthread_self()), ordering: .releasing)
        defer {
            owner.store(0, ordering: .releasing)
            pthread_mutex_unlock(mutex)
        }
        return try body()
    }
}

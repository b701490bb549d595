// A pthread mutex and condition variable at a stable heap address. A pthread_mutex_t stored
// inline in a Swift class and passed as `&mutex` is undefined behaviour: inout-to-pointer gives
// no stable address for a stored property. These allocate once, initialise once and destroy
// once, so every waiter and holder sees the same object. Use Synchronization.Mutex where no
// condition variable is needed; these are for wait/broadcast.
#if canImport(Glibc)
import Glibc
#endif

public final class Lock: @unchecked Sendable {
    // @unchecked Sendable: the pointee is only touched through pthread_mutex_*.
    fileprivate let mutex: UnsafeMutablePointer<pthread_mutex_t>

    public init() {
        mutex = UnsafeMutablePointer<pthread_mutex_t>.allocate(capacity: 1)
        mutex.initialize(to: pthread_mutex_t())
        let code = pthread_mutex_init(mutex, nil)
        precondition(code == 0, "pthread_mutex_init: \(code)")
    }

    deinit {
        pthread_mutex_destroy(mutex)
        mutex.deinitialize(count: 1)
        mutex.deallocate()
    }

    public func lock() {
        let code = pthread_mutex_lock(mutex)
        precondition(code == 0, "pthread_mutex_lock: \(code)")
    }

    public func unlock() {
        let code = pthread_mutex_unlock(mutex)
        precondition(code == 0, "pthread_mutex_unlock: \(code)")
    }

    /// Holds the lock for `body`.
    public func withLock<Value, Failure: Error>(_ body: () throws(Failure) -> Value) throws(Failure) -> Value {
        lock()
        defer { unlock() }
        return try body()
    }
}

/// A condition variable on CLOCK_MONOTONIC (timed waits ignore wall-clock steps).
public final class Condition: @unchecked Sendable {
    // @unchecked Sendable: the pointee is only touched through pthread_cond_*.
    private let condition: UnsafeMutablePointer<pthread_cond_t>

    public init() {
        condition = UnsafeMutablePointer<pthread_cond_t>.allocate(capacity: 1)
        condition.initialize(to: pthread_cond_t())
        var attributes = pthread_condattr_t()
        pthread_condattr_init(&attributes)
        pthread_condattr_setclock(&attributes, CLOCK_MONOTONIC)
        let code = pthread_cond_init(condition, &attributes)
        pthread_condattr_destroy(&attributes)
        precondition(code == 0, "pthread_cond_init: \(code)")
    }

    deinit {
        pthread_cond_destroy(condition)
        condition.deinitialize(count: 1)
        condition.deallocate()
    }

    /// Releases `lock` (which the caller holds), waits for a signal and takes it back. Wakes may
    /// be spurious: wait in a loop over the condition's predicate.
    public func wait(_ lock: Lock) {
        let code = pthread_cond_wait(condition, lock.mutex)
        precondition(code == 0, "pthread_cond_wait: \(code)")
    }

    /// As `wait`, for at most `millis` milliseconds; false when the time ran out.
    public func wait(_ lock: Lock, timeoutMillis millis: UInt64) -> Bool {
        var deadline = timespec()
        clock_gettime(CLOCK_MONOTONIC, &deadline)
        let nanos = UInt64(deadline.tv_nsec) + (millis % 1000) * 1_000_000
        deadline.tv_sec += Int(clamping: millis / 1000 + nanos / 1_000_000_000)
        deadline.tv_nsec = Int(nanos % 1_000_000_000)
        let code = pthread_cond_timedwait(condition, lock.mutex, &deadline)
        precondition(code == 0 || code == ETIMEDOUT, "pthread_cond_timedwait: \(code)")
        return code == 0
    }

    /// Wakes one waiter.
    public func signal() { pthread_cond_signal(condition) }

    /// Wakes every waiter.
    public func broadcast() { pthread_cond_broadcast(condition) }
}

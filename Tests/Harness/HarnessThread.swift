// A joinable pthread for the harness's background actors (owner probe, link attackers): the
// object is retained for the thread's lifetime and `run` is its whole body.
#if canImport(Glibc)
import Glibc
#endif

enum HarnessThread {
    /// Starts `run(object)` on a new thread; returns it for pthread_join.
    static func start<Object: AnyObject & Sendable>(_ object: Object, run: @escaping @Sendable (Object) -> Void) -> pthread_t {
        let context = Unmanaged.passRetained(ThreadBody { run(object) })
        var created = pthread_t()
        let status = pthread_create(&created, nil, { raw in
            Unmanaged<ThreadBody>.fromOpaque(raw!).takeRetainedValue().body()
            return nil
        }, context.toOpaque())
        precondition(status == 0, "pthread_create: \(status)")
        return created
    }
}

/// The closure a harness thread runs, carried through pthread_create's context pointer.
private final class ThreadBody: Sendable {
    let body: @Sendable () -> Void
    init(_ body: @escaping @Sendable () -> Void) { self.body = body }
}

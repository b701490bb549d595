// A joinable thread for the harness's background actors (owner probe, link attackers): the
// object is retained for the thread's lifetime and `run` is its whole body.
import Drivers

enum HarnessThread {
    /// Starts `run(object)` on a new thread (SystemThread); the caller joins it. A harness that
    /// cannot start its thread cannot run the test at all: that stops here, with the errno.
    static func start<Object: AnyObject & Sendable>(_ object: Object, run: @escaping @Sendable (Object) -> Void) -> SystemThread {
        do {
            return try SystemThread.start(name: "harness-\(Object.self)") { run(object) }
        } catch {
            preconditionFailure("harness thread: \(error)")
        }
    }
}

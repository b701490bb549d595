// The one way this code base starts a thread: pthread_create with its result checked (a
// failure is a typed error, never an ignored status), a name the kernel shows in top/ps and
// core dumps, and a join that cannot happen twice (joining a joined pthread is undefined).
#if canImport(Glibc)
import Glibc
#endif
import CShims
import Synchronization

public final class SystemThread: Sendable {
    /// Names are cut to 15 bytes, the kernel's limit for a thread name.
    public let name: String
    private let handle: pthread_t
    private let joined = Atomic<Bool>(false)

    /// The closure and name the new thread runs with, carried through pthread_create's context.
    private final class Start {
        let name: String
        let body: @Sendable () -> Void
        init(name: String, body: @escaping @Sendable () -> Void) {
            self.name = name
            self.body = body
        }
    }

    private init(name: String, handle: pthread_t) {
        self.name = name
        self.handle = handle
    }

    /// Starts `body` on a new joinable thread named `name`. `stackBytes` overrides the default
    /// stack size (nil: the system's). Throws EAGAIN (thread limit, no memory for the stack) or
    /// EINVAL (a stack size the system refuses); `body` has not run then.
    public static func start(name: String, stackBytes: Int? = nil, _ body: @escaping @Sendable () -> Void) throws(Errno) -> SystemThread {
        let shortName = String(decoding: Array(name.utf8.prefix(15)), as: UTF8.self)
        var attributes = pthread_attr_t()
        try retryOnInterruptedErrorCode("pthread_attr_init", { pthread_attr_init(&attributes) })
        defer { pthread_attr_destroy(&attributes) }
        if let stackBytes {
            try retryOnInterruptedErrorCode("pthread_attr_setstacksize \(stackBytes)", { pthread_attr_setstacksize(&attributes, stackBytes) })
        }
        let context = Unmanaged.passRetained(Start(name: shortName, body: body))
        var handle = pthread_t()
        do throws(Errno) {
            try retryOnInterruptedErrorCode("pthread_create \(shortName)", {
                pthread_create(&handle, &attributes, { raw in
                    let start = Unmanaged<Start>.fromOpaque(raw!).takeRetainedValue()
                    // Named from inside: no window where another thread could rename it.
                    _ = ock_set_current_thread_name(start.name)
                    start.body()
                    return nil
                }, context.toOpaque())
            })
        } catch {
            context.release()
            throw error
        }
        return SystemThread(name: shortName, handle: handle)
    }

    /// Waits for the thread to end. Only the first call joins; later ones return at once.
    public func join() {
        guard !joined.exchange(true, ordering: .acquiringAndReleasing) else { return }
        // pthread_join fails only for a detached, unknown or self-joined thread: a bug here.
        let code = pthread_join(handle, nil)
        precondition(code == 0, "pthread_join \(name): \(code)")
    }

    /// The calling thread's name as the kernel reports it (diagnostics and tests).
    public static var currentName: String {
        var buffer = [CChar](repeating: 0, count: 16)
        guard ock_get_current_thread_name(&buffer) == 0 else { return "" }
        return String(decoding: buffer.prefix { $0 != 0 }.map { UInt8(bitPattern: $0) }, as: UTF8.self)
    }
}

// Runs a CloudLink on a thread of its own (not libmosquitto's): the agent's main loop never
// waits on the network, and a dead connection is noticed and retried by our code, forever.
#if canImport(Glibc)
import Glibc
#endif
import Protocol
import Synchronization

/// A snapshot other threads may read (console status, state reports).
public struct CloudSnapshot: Sendable, Equatable {
    public var connected = false
    public var birth: UInt64 = 0
    public var lastError: String?
    public var inboundAccepted = 0
    public var inboundRejected = 0
}

public final class CloudService: @unchecked Sendable {
    // @unchecked Sendable: `link` and `gate` are touched only by the service thread; the rest is
    // behind Mutexes or immutable.
    private let link: CloudLink
    private let gate: InboundGate
    private let outbox: SQLiteOutbox
    private let onInbound: @Sendable (InboundEnvelope) -> Void
    private let log: @Sendable (String) -> Void
    private let stopRequested = Mutex(false)
    private let snapshotBox = Mutex(CloudSnapshot())
    private var thread = pthread_t()
    private var running = false

    public init(options: MQTTConnectOptions, vehicleID: String, store: CarStore, willDelaySeconds: UInt32 = 10,
                onInbound: @escaping @Sendable (InboundEnvelope) -> Void, log: @escaping @Sendable (String) -> Void) throws {
        let topics = CloudTopics(vehicleID: vehicleID)
        let outbox = SQLiteOutbox(store: store)
        self.outbox = outbox
        self.gate = InboundGate(topics: topics, store: store)
        self.onInbound = onInbound
        self.log = log
        let transport = try MosquittoTransport(options: options)
        link = CloudLink(settings: CloudLinkSettings(vehicleID: vehicleID, willDelaySeconds: willDelaySeconds, subscriptions: topics.inbound),
                         transport: transport, outbox: outbox,
                         nextBirthSequence: { try outbox.nextBirthSequence() },
                         unitRandom: { Double((try? SystemRandom().randomBytes(4)).map { $0.reduce(0) { $0 << 8 | UInt32($1) } } ?? 0) / 4_294_967_296 })
        // From now on every audit event is also queued for the cloud, in the same transaction
        // (those appended before, at start-up or while offline, first).
        try store.routeEvents(EventPayload.router(topics))
    }

    public var snapshot: CloudSnapshot { snapshotBox.withLock { $0 } }

    public func start() {
        let unmanaged = Unmanaged.passRetained(self)
        pthread_create(&thread, nil, { raw in
            let service = Unmanaged<CloudService>.fromOpaque(raw!).takeRetainedValue()
            service.runLoop()
            return nil
        }, unmanaged.toOpaque())
        running = true
    }

    /// Publishes "offline", disconnects cleanly and joins the thread.
    public func stop() {
        stopRequested.withLock { $0 = true }
        if running { pthread_join(thread, nil) }
        running = false
    }

    private func runLoop() {
        while !stopRequested.withLock({ $0 }) {
            let reports = link.step(nowMillis: monotonicNow(), serviceMillis: 50)
            for report in reports { handle(report) }
            snapshotBox.withLock { snapshot in
                snapshot.connected = link.state == .connected
                snapshot.birth = link.birth
                snapshot.lastError = link.lastError
                snapshot.inboundAccepted = gate.counters.accepted
                snapshot.inboundRejected = gate.counters.rejected.values.reduce(0, +)
            }
            if case .waiting = link.state { usleep(50_000) }
        }
        link.stop(clock: monotonicNow)
        try? outbox.flushAcknowledgements()
    }

    private func handle(_ report: CloudLinkReport) {
        switch report {
        case .connected(let birth, let sessionPresent):
            log("cloud: connected (birth \(birth), session \(sessionPresent ? "resumed" : "new"))")
        case .connectFailed(let reason, let retry):
            log("cloud: connect failed: \(reason); retry in \(retry) ms")
            try? outbox.setLastError(reason)
        case .connectionLost(let reason, let retry):
            log("cloud: connection lost: \(reason); retry in \(retry) ms")
            try? outbox.setLastError(reason)
        case .refused(let id, let topic, let code):
            log("cloud: broker refused outbox message \(id) on \(topic) (reason 0x\(String(code, radix: 16))); kept queued")
        case .inbound(let message):
            switch gate.admit(message) {
            case .success(let envelope): onInbound(envelope)
            case .failure(let reason): log("cloud: inbound message on \(message.topic) rejected: \(reason.rawValue)")
            }
        }
    }
}

func monotonicNow() -> UInt64 {
    var ts = timespec()
    clock_gettime(CLOCK_MONOTONIC, &ts)
    return UInt64(ts.tv_sec) * 1000 + UInt64(ts.tv_nsec) / 1_000_000
}

// Runs a CloudLink on a thread of its own (not libmosquitto's): the agent's main loop never
// waits on the network, and a dead connection is noticed and retried by our code, forever.
//
// The thread sleeps in poll(2) on the broker socket (writable only while libmosquitto has bytes
// queued) and a wake eventfd, with a timeout from the next thing due: the reconnect time, the
// CONNACK timeout, the keepalive, or the acknowledgement flush while acknowledgements are
// buffered. The store raises the wake descriptor when a committed write added outbox rows, and
// stop() raises it to end the thread; the outbox is read only then (or when acknowledgements
// freed window room for messages held back). An idle car costs this thread about two wake-ups
// per keepalive interval and no SQLite reads.
import Drivers
import Protocol
import Synchronization

/// A snapshot other threads may read (console status, state reports).
struct CloudSnapshot: Sendable, Equatable {
    var connected = false
    var birth: UInt64 = 0
    var lastError: String?
    var inboundAccepted = 0
    var inboundRejected = 0
    /// Admitted messages the agent's bounded mailbox shed under a flood (filled in by the agent).
    var inboundShed = 0
    /// The broker node connected to, or tried next ("mqtt://host:port").
    var endpoint: String?
    /// Set while the broker grants a shorter session expiry than asked (ejabberd caps it at 5
    /// minutes by default): commands for a car offline longer are dropped by the broker.
    var sessionExpiryCapSeconds: UInt32?
}

final class CloudService: @unchecked Sendable {
    // @unchecked Sendable: `link` and `gate` are touched only by the service thread; the rest is
    // behind Mutexes or immutable.
    private let link: CloudLink
    private let gate: InboundGate
    private let outbox: SQLiteOutbox
    /// Hands an admitted message on; returns a message dropped unhandled to make room (the
    /// agent's bounded mailbox shed it, possibly this one), whose ID the gate then forgets so
    /// the cloud's retry is admitted. Called on the service thread, like the gate.
    private let onInbound: @Sendable (InboundEnvelope) -> InboundEnvelope?
    private let log: @Sendable (String) -> Void
    private let stopRequested = Mutex(false)
    /// Raised by stop() and by the store after a commit that enqueued outbox rows.
    private let wake: EventCounter
    private let outboxSignal: OutboxSignal
    private let snapshotBox = Mutex(CloudSnapshot())
    /// Connect failures are logged (and stored as the outbox's last error) when they start or
    /// change, not on every retry of a long outage. Service thread only.
    private var failures: [String: RepeatFilter] = [:]
    private var flushFailures = RepeatFilter()
    /// Deadlines and "now" on the service thread; injected so the loop's timing follows the
    /// agent's monotonic clock, never the wall clock.
    private let clock: any MonotonicClock
    /// Set by start(), taken by stop(); both run on the agent's thread.
    private var thread: SystemThread?

    /// `endpoints`: the broker nodes to rotate over (default: `options.endpoint` alone); each gets
    /// `options` with its own endpoint.
    init(options: MQTTConnectOptions, endpoints: [MQTTEndpoint]? = nil, vehicleID: String, store: CarStore, willDelaySeconds: UInt32 = 10,
         heartbeatSeconds: UInt32 = 0, clock: any MonotonicClock = SystemClock(),
                onInbound: @escaping @Sendable (InboundEnvelope) -> InboundEnvelope?, log: @escaping @Sendable (String) -> Void) throws {
        let topics = CloudTopics(vehicleID: vehicleID)
        let outbox = SQLiteOutbox(store: store)
        self.outbox = outbox
        let wake = try EventCounter()
        self.wake = wake
        outboxSignal = OutboxSignal(wake: wake)
        self.gate = InboundGate(topics: topics, store: store)
        self.onInbound = onInbound
        self.log = log
        self.clock = clock
        let settings = CloudLinkSettings(vehicleID: vehicleID, willDelaySeconds: willDelaySeconds, subscriptions: topics.inbound,
                                         sessionExpirySeconds: options.sessionExpirySeconds, heartbeatSeconds: heartbeatSeconds)
        link = try CloudLink(settings: settings, endpoints: endpoints ?? [options.endpoint],
                             makeTransport: { (endpoint: MQTTEndpoint) throws(MQTTError) -> MQTTTransport in
                                 try MosquittoTransport(options: Self.options(options, at: endpoint))
                             },
                             outbox: outbox, nextBirthSequence: { try outbox.nextBirthSequence() },
                             unitRandom: { Double((try? SystemRandom().randomBytes(4)).map { $0.reduce(0) { $0 << 8 | UInt32($1) } } ?? 0) / 4_294_967_296 })
        // From now on every audit event is also queued for the cloud, in the same transaction
        // (those appended before, at start-up or while offline, first).
        store.observeOutbox(outboxSignal)
        try store.routeEvents(EventPayload.router(topics))
    }

    /// `options` aimed at `endpoint` (one transport per broker node).
    private static func options(_ options: MQTTConnectOptions, at endpoint: MQTTEndpoint) -> MQTTConnectOptions {
        var forEndpoint = options
        forEndpoint.endpoint = endpoint
        return forEndpoint
    }

    var snapshot: CloudSnapshot { snapshotBox.withLock { $0 } }

    /// Starts the service thread; throws when none could be created (the agent cannot run
    /// its cloud link then, and says so rather than running silently offline).
    func start() throws(Errno) {
        guard thread == nil else { return }
        thread = try SystemThread.start(name: "carkey-cloud") { self.runLoop() }
    }

    /// Publishes "offline", disconnects cleanly and joins the thread.
    func stop() {
        stopRequested.withLock { $0 = true }
        wake.signal()
        thread?.join()
        thread = nil
        outbox.store.observeOutbox(nil)
    }

    private func runLoop() {
        var readiness: PollEvents = []
        while !stopRequested.withLock({ $0 }) {
            let now = clock.nowMillis()
            if outboxSignal.take() { link.outboxChanged() }
            let reports = link.step(nowMillis: now, readable: !readiness.isDisjoint(with: [.readable, .hangUp, .error]),
                                    writable: readiness.contains(.writable))
            for report in reports { handle(report) }
            if let due = outbox.acknowledgementFlushDue, now >= due {
                do {
                    try outbox.flushAcknowledgements()
                    _ = flushFailures.end()
                } catch {
                    // Retried every second while it fails (a full disk): logged when it starts or changes.
                    if let line = flushFailures.admit("\(error)") { log("cloud: outbox acknowledgements not deleted yet: \(line); retried") }
                }
            }
            publishSnapshot()
            readiness = wait(now: now)
        }
        link.stop(clock: clock.nowMillis)
        try? outbox.flushAcknowledgements()
    }

    /// Sleeps until the socket is ready, the wake descriptor is raised or the next deadline;
    /// returns the socket's readiness (empty when something else ended the wait).
    private func wait(now: UInt64) -> PollEvents {
        var requests = [(wake.descriptor, PollEvents.readable)]
        if let socket = link.pollRequest { requests.append(socket) }
        let due = [link.nextDeadline(), outbox.acknowledgementFlushDue].compactMap { $0 }.min()
        let timeout = due.map { $0 > now ? Int32(clamping: $0 - now) : 0 } ?? -1
        guard let ready = try? Poll.wait(requests, timeoutMillis: timeout) else {
            // poll(2) itself failed (ENOMEM): sleep on the clock alone rather than spin.
            clock.sleep(millis: 100)
            return []
        }
        if !ready[0].isEmpty { wake.drain() }
        return requests.count > 1 ? ready[1] : []
    }

    private func publishSnapshot() {
        let current = CloudSnapshot(connected: link.state == .connected, birth: link.birth, lastError: link.lastError,
                                    inboundAccepted: gate.counters.accepted,
                                    inboundRejected: gate.counters.rejected.values.reduce(0, +),
                                    endpoint: link.currentEndpoint?.description, sessionExpiryCapSeconds: link.sessionExpiryCapSeconds)
        snapshotBox.withLock { $0 = current }
    }

    /// " at mqtt://B" when the next attempt goes to another endpoint than the one that failed.
    private func nextAttempt(after failed: MQTTEndpoint?) -> String {
        guard let next = link.currentEndpoint, let failed, next != failed else { return "" }
        return " at \(next)"
    }

    private func handle(_ report: CloudLinkReport) {
        switch report {
        case .connected(let birth, let sessionPresent, let endpoint):
            let repeats = failures.values.reduce(0) { $0 + $1.repeats }
            failures.removeAll()
            log("cloud: connected" + (endpoint.map { " to \($0)" } ?? "") + " (birth \(birth), session \(sessionPresent ? "resumed" : "new"))"
                + (repeats > 0 ? "; \(repeats) repeated connect failures were not logged" : ""))
        case .connectFailed(let reason, let retry, let failed):
            // One filter per endpoint: with several nodes down, their failures alternate.
            let key = failed?.description ?? ""
            guard let line = failures[key, default: RepeatFilter()].admit(reason) else { return }
            log("cloud: connect failed: \(line); retry in \(retry) ms" + nextAttempt(after: failed))
            try? outbox.setLastError(reason)
        case .connectionLost(let reason, let retry, let failed):
            failures.removeAll()
            log("cloud: connection lost: \(reason); retry in \(retry) ms" + nextAttempt(after: failed))
            try? outbox.setLastError(reason)
        case .refused(let id, let topic, let code):
            log("cloud: broker refused outbox message \(id) on \(topic) (reason \(MQTTReasonCode.describe(code))); kept queued")
        case .subscriptionRefused(let filter, let code):
            log("cloud: broker refused the subscription to \(filter) (reason \(MQTTReasonCode.describe(code)))")
        case .sessionExpiryCapped(let granted, let asked):
            log("cloud: broker caps the session expiry at \(granted) s (asked \(asked) s): commands queued for the car while it is "
                + "offline longer are dropped by the broker; retained configuration and revocations are re-read at subscribe, "
                + "the outbox is the car's own")
        case .inbound(let message):
            // The gate is touched on this thread only: a shed message's ID is forgotten here,
            // not by the mailbox (which the agent's thread drains concurrently).
            switch gate.admit(message, deliver: onInbound) {
            case .success: break
            case .failure(.retainedRepeat):
                log("cloud: retained message on \(message.topic) already received (applied or answered before); ignored")
            case .failure(let reason):
                log("cloud: inbound message on \(message.topic) rejected: \(reason.rawValue)" + (gate.lastDetail.map { " (\($0))" } ?? ""))
            }
        }
    }
}

/// The store's OutboxObserver for the cloud thread: remembers that rows were enqueued and
/// raises the thread's wake descriptor. Runs on the committing thread: one atomic store, one
/// eventfd write.
final class OutboxSignal: OutboxObserver {
    private let pending = Atomic<Bool>(false)
    private let wake: EventCounter

    init(wake: EventCounter) { self.wake = wake }

    func outboxEnqueued() {
        pending.store(true, ordering: .releasing)
        wake.signal()
    }

    /// True once per burst of enqueues: taken before the outbox is read, so a commit after the
    /// read raises it again.
    func take() -> Bool { pending.exchange(false, ordering: .acquiringAndReleasing) }
}

// The supervised cloud connection: reconnects forever with jittered backoff, announces
// presence (birth, will, clean offline), and drains the durable outbox into the broker,
// deleting a message only when the broker's v5 acknowledgement says it was accepted.
//
// Several endpoints (a cluster's nodes) are tried in turn by EndpointRotation, each with its own
// backoff. Moving to another node uses a fresh transport: libmosquitto would resend what was in
// flight with message IDs the new node never saw, so instead everything unacknowledged is
// re-read from the outbox (duplicates are possible, losses are not; the cloud de-duplicates by
// UUID). A CONNACK without a session (a new node, an expired session) is followed by the last
// acknowledged retained messages (RetainedReplay), since retained messages need not be there.
//
// Single-threaded by design: one owner thread drives it. Time and randomness are injected so
// the reconnect schedule is testable without waiting. Two ways to drive it:
// - `step(nowMillis:serviceMillis:)`: a blocking service pass and an outbox read every call
//   (tests with a scripted transport, tools);
// - readiness (CloudService): poll `pollRequest` until `nextDeadline`, then
//   `step(nowMillis:readable:writable:)`, which never blocks and reads the outbox only after
//   `outboxChanged()`, a (re)connect, or while the window held back messages still waiting.

public struct CloudLinkSettings: Sendable {
    public var vehicleID: String
    /// How many outbox messages may be handed to the transport before their acknowledgement.
    public var window: Int
    public var willDelaySeconds: UInt32
    /// Topic filters to subscribe after every CONNACK.
    public var subscriptions: [String]
    /// The session expiry the transport asks for in its CONNECT (to tell a broker's cap).
    public var sessionExpirySeconds: UInt32
    /// 0: off. Otherwise {"birth":N,"seq":K} QoS 0 on vehicles/{id}/heartbeat this often while
    /// connected, for a back end that wants to notice a car lost with its broker node (no will).
    public var heartbeatSeconds: UInt32

    public init(vehicleID: String, window: Int = 32, willDelaySeconds: UInt32 = 10, subscriptions: [String] = [],
                sessionExpirySeconds: UInt32 = MQTTConnectOptions.defaultSessionExpirySeconds, heartbeatSeconds: UInt32 = 0) {
        self.vehicleID = vehicleID
        self.window = window
        self.willDelaySeconds = willDelaySeconds
        self.subscriptions = subscriptions
        self.sessionExpirySeconds = sessionExpirySeconds
        self.heartbeatSeconds = heartbeatSeconds
    }

    public var statusTopic: String { "vehicles/\(vehicleID)/status" }
    public var heartbeatTopic: String { "vehicles/\(vehicleID)/heartbeat" }
}

/// What the link reports to the agent (for the console, status and logs). No payloads.
public enum CloudLinkReport: Sendable, Equatable {
    /// `endpoint`: where, when the link knows its endpoints (nil with a single given transport).
    case connected(birth: UInt64, sessionPresent: Bool, endpoint: MQTTEndpoint? = nil)
    /// `at`: the endpoint that failed (nil with a single given transport).
    case connectFailed(String, retryInMillis: UInt64, at: MQTTEndpoint? = nil)
    case connectionLost(String, retryInMillis: UInt64, at: MQTTEndpoint? = nil)
    case refused(outboxID: Int64, topic: String, reasonCode: Int32)
    /// The broker refused a subscription (SUBACK reason >= 0x80): its messages will not come.
    case subscriptionRefused(topicFilter: String, reasonCode: Int32)
    /// The CONNACK granted a shorter session expiry than asked (once per connection).
    case sessionExpiryCapped(grantedSeconds: UInt32, askedSeconds: UInt32)
    case inbound(MQTTInbound)
}

public enum CloudLinkState: Sendable, Equatable {
    case waiting(untilMillis: UInt64)
    case connecting(sinceMillis: UInt64)
    case connected
    case stopped
}

public final class CloudLink {
    public let settings: CloudLinkSettings
    private var transport: MQTTTransport
    /// Empty with the single-transport init; else the endpoints and how to reach each.
    public let endpoints: [MQTTEndpoint]
    private let makeTransport: ((MQTTEndpoint) throws(MQTTError) -> MQTTTransport)?
    /// The endpoint `transport` talks to.
    private var transportEndpoint = 0
    private let outbox: OutboxStore
    private let nextBirthSequence: () throws -> UInt64
    private let unitRandom: () -> Double
    public private(set) var state: CloudLinkState = .waiting(untilMillis: 0)
    public private(set) var rotation: EndpointRotation
    /// The backoff of the endpoint being tried (a single endpoint's, as before rotation existed).
    public var backoff: ReconnectBackoff { rotation.currentBackoff }
    public private(set) var birth: UInt64 = 0
    /// The endpoint of the current or next attempt (nil with the single-transport init).
    public var currentEndpoint: MQTTEndpoint? { endpoints.isEmpty ? nil : endpoints[rotation.current] }
    /// Set when this connection's CONNACK granted less session expiry than asked.
    public private(set) var sessionExpiryCapSeconds: UInt32?
    private var retained = RetainedReplay()
    /// Set by a CONNACK without a session: replay retained state at the next outbox read.
    private var replayDue = false
    private var nextHeartbeatMillis: UInt64?
    private var heartbeatSequence: UInt64 = 0
    /// Transport message ID -> outbox message, for what was handed over and not yet acknowledged.
    private var inFlight: [Int32: OutboxMessage] = [:]
    /// Highest outbox ID handed to the transport in this connection.
    private var handedUpTo: Int64 = 0
    public private(set) var lastError: String?
    /// A CONNACK must arrive within this long after a connect call.
    public var connectTimeoutMillis: UInt64 = 15_000
    /// The outbox may hold messages not yet handed over: read it at the next pump. Cleared
    /// when a read came back short (all handed over), set by `outboxChanged()` and (re)connects.
    public private(set) var outboxDirty = true

    /// One broker, one transport (reused across reconnects).
    public init(settings: CloudLinkSettings, transport: MQTTTransport, outbox: OutboxStore,
                nextBirthSequence: @escaping () throws -> UInt64, unitRandom: @escaping () -> Double,
                backoff: ReconnectBackoff = ReconnectBackoff()) {
        self.settings = settings
        rotation = EndpointRotation(count: 1, backoff: backoff)
        self.transport = transport
        endpoints = []
        makeTransport = nil
        self.outbox = outbox
        self.nextBirthSequence = nextBirthSequence
        self.unitRandom = unitRandom
    }

    /// Several endpoints (1 to 8), tried in turn; `makeTransport` gives a fresh transport for
    /// one. The first is made here, so a bad option fails at start-up.
    public init(settings: CloudLinkSettings, endpoints: [MQTTEndpoint], makeTransport: @escaping (MQTTEndpoint) throws(MQTTError) -> MQTTTransport,
                outbox: OutboxStore, nextBirthSequence: @escaping () throws -> UInt64, unitRandom: @escaping () -> Double,
                backoff: ReconnectBackoff = ReconnectBackoff()) throws(MQTTError) {
        precondition(!endpoints.isEmpty, "at least one endpoint")
        self.settings = settings
        rotation = EndpointRotation(count: endpoints.count, backoff: backoff)
        transport = try makeTransport(endpoints[0])
        self.endpoints = endpoints
        self.makeTransport = makeTransport
        self.outbox = outbox
        self.nextBirthSequence = nextBirthSequence
        self.unitRandom = unitRandom
    }

    public var inFlightCount: Int { inFlight.count }

    /// One pass: connect when due, move bytes for up to `serviceMillis`, pump the outbox.
    public func step(nowMillis: UInt64, serviceMillis: Int32 = 100) -> [CloudLinkReport] {
        outboxDirty = true
        return advance(nowMillis: nowMillis) { transport.service(timeoutMillis: serviceMillis) }
    }

    /// One readiness pass, never blocking: connect when due, read and write what the socket is
    /// ready for, keepalive when due, and pump the outbox if it may hold something new.
    public func step(nowMillis: UInt64, readable: Bool, writable: Bool) -> [CloudLinkReport] {
        advance(nowMillis: nowMillis) { transport.service(readable: readable, writable: writable, nowMillis: nowMillis) }
    }

    /// New rows were committed to the outbox (the store's OutboxObserver): read it at the next pass.
    public func outboxChanged() { outboxDirty = true }

    /// The descriptor to poll and for what, while connecting or connected. Not while waiting
    /// to reconnect: a socket left open by a CONNACK timeout is not serviced then, and polling
    /// it would spin on data nobody reads.
    public var pollRequest: (FileDescriptor, PollEvents)? {
        switch state {
        case .connecting, .connected: break
        case .waiting, .stopped: return nil
        }
        guard let socket = transport.socketDescriptor else { return nil }
        return (socket, transport.wantsWrite ? [.readable, .writable] : .readable)
    }

    /// When the next readiness pass is due without any descriptor being ready: the reconnect
    /// time, the CONNACK timeout, the keepalive housekeeping or the heartbeat. nil: only when ready.
    public func nextDeadline() -> UInt64? {
        let housekeeping = transport.nextHousekeepingMillis()
        switch state {
        case .stopped: return nil
        case .waiting(let until): return until
        case .connecting(let since): return min(since + connectTimeoutMillis, housekeeping ?? .max)
        case .connected: return [housekeeping, nextHeartbeatMillis].compactMap { $0 }.min()
        }
    }

    private func advance(nowMillis: UInt64, service: () -> (events: [MQTTEvent], error: MQTTError?)) -> [CloudLinkReport] {
        var reports: [CloudLinkReport] = []
        switch state {
        case .stopped:
            return []
        case .waiting(let until):
            guard nowMillis >= until else { return [] }
            attemptConnect(nowMillis: nowMillis, reports: &reports)
            if case .waiting = state { return reports }
        case .connecting(let since):
            if nowMillis >= since + connectTimeoutMillis {
                scheduleRetry(nowMillis: nowMillis, because: "no CONNACK within \(connectTimeoutMillis) ms", lost: false, reports: &reports)
                return reports
            }
        case .connected:
            break
        }
        let (events, error) = service()
        for event in events { handle(event, nowMillis: nowMillis, reports: &reports) }
        if let error, state != .stopped, !isWaiting {
            scheduleRetry(nowMillis: nowMillis, because: error.description, lost: state == .connected, reports: &reports)
        }
        if state == .connected && outboxDirty { pump(nowMillis: nowMillis, reports: &reports) }
        if state == .connected { heartbeat(nowMillis: nowMillis) }
        return reports
    }

    /// {"birth":N,"seq":K}, QoS 0, not retained: a sign of life that costs no acknowledgement.
    private func heartbeat(nowMillis: UInt64) {
        guard let due = nextHeartbeatMillis, nowMillis >= due else { return }
        heartbeatSequence += 1
        let payload = Array("{\"birth\":\(birth),\"seq\":\(heartbeatSequence)}".utf8)
        _ = try? transport.publish(MQTTPublish(topic: settings.heartbeatTopic, payload: payload, qos: .atMostOnce))
        nextHeartbeatMillis = nowMillis + UInt64(settings.heartbeatSeconds) * 1000
    }

    /// Clean stop, when connected: what the outbox holds is handed over and its acknowledgements
    /// awaited (for at most `drainMillis`), so what the agent queued last (its final audit
    /// checkpoint) reaches the broker now and not at the next connect; then retained "offline",
    /// acknowledged within another `drainMillis`; then DISCONNECT (so the broker discards the
    /// will). Messages not acknowledged in time stay in the outbox for the next connect.
    public func stop(drainMillis: UInt64 = 2_000, clock: () -> UInt64) {
        if state == .connected {
            drain(until: clock() + drainMillis, clock: clock)
        }
        if state == .connected {
            let payload = PresencePayload.encode(state: "offline", birth: birth)
            if let mid = try? transport.publish(MQTTPublish(topic: settings.statusTopic, payload: payload, qos: .atLeastOnce, retain: true)) {
                let deadline = clock() + drainMillis
                var acknowledged = false
                while !acknowledged && clock() < deadline {
                    let (events, error) = transport.service(timeoutMillis: 50)
                    acknowledged = events.contains { if case .published(mid, _) = $0 { return true } else { return false } }
                    if error != nil { break }
                }
            }
            transport.disconnect()
        }
        state = .stopped
    }

    /// Hands the outbox over and services the connection until nothing is in flight or unread,
    /// the deadline passes, or the connection fails. Inbound messages that arrive meanwhile
    /// are not handed on: the agent is stopping and its mailbox is no longer read.
    private func drain(until deadline: UInt64, clock: () -> UInt64) {
        outboxDirty = true
        var reports: [CloudLinkReport] = []
        while state == .connected && clock() < deadline {
            if outboxDirty { pump(nowMillis: clock(), reports: &reports) }
            if inFlight.isEmpty && !outboxDirty { return }
            let (events, error) = transport.service(timeoutMillis: 50)
            for event in events { handle(event, nowMillis: clock(), reports: &reports) }
            if error != nil { return }
        }
    }

    private var isWaiting: Bool {
        if case .waiting = state { return true }
        return false
    }

    private func attemptConnect(nowMillis: UInt64, reports: inout [CloudLinkReport]) {
        do {
            if rotation.current != transportEndpoint, let makeTransport {
                // Another node: a fresh transport, and everything unacknowledged is handed over
                // again from the outbox (the old transport's message IDs mean nothing there).
                // The old one is dropped without a DISCONNECT (its node is dead or unreachable).
                transport = try makeTransport(endpoints[rotation.current])
                transportEndpoint = rotation.current
                inFlight.removeAll()
                handedUpTo = 0
                outboxDirty = true
            }
            sessionExpiryCapSeconds = nil
            // Every connect gets a new birth number; the will carries it so the cloud can tell
            // which session died.
            birth = try nextBirthSequence()
            try transport.setWill(MQTTWill(topic: settings.statusTopic, payload: PresencePayload.encode(state: "lost", birth: birth),
                                           qos: .atLeastOnce, retain: true, delaySeconds: settings.willDelaySeconds))
            try transport.connect()
            state = .connecting(sinceMillis: nowMillis)
        } catch {
            scheduleRetry(nowMillis: nowMillis, because: "\(error)", lost: false, reports: &reports)
        }
    }

    private func scheduleRetry(nowMillis: UInt64, because reason: String, lost: Bool, reports: inout [CloudLinkReport]) {
        let failedAt = currentEndpoint
        let until = rotation.failed(nowMillis: nowMillis, unitRandom: unitRandom)
        let delay = until - nowMillis
        state = .waiting(untilMillis: until)
        nextHeartbeatMillis = nil
        lastError = reason
        reports.append(lost ? .connectionLost(reason, retryInMillis: delay, at: failedAt) : .connectFailed(reason, retryInMillis: delay, at: failedAt))
    }

    private func handle(_ event: MQTTEvent, nowMillis: UInt64, reports: inout [CloudLinkReport]) {
        switch event {
        case .sessionExpiry(let granted):
            sessionExpiryCapSeconds = granted < settings.sessionExpirySeconds ? granted : nil
            if granted < settings.sessionExpirySeconds {
                reports.append(.sessionExpiryCapped(grantedSeconds: granted, askedSeconds: settings.sessionExpirySeconds))
            }
        case .connected(let sessionPresent):
            state = .connected
            rotation.connected()
            lastError = nil
            heartbeatSequence = 0
            nextHeartbeatMillis = settings.heartbeatSeconds > 0 ? nowMillis + UInt64(settings.heartbeatSeconds) * 1000 : nil
            // No session here: retained state may be missing too (another node, an expired session).
            replayDue = !sessionPresent
            // libmosquitto resends what was in flight (same message IDs); everything else is
            // re-read from the start of the outbox, skipping those. Not from the highest
            // in-flight ID: refused messages and the ones held behind them sit below it, and
            // would wait for a reconnect that happens to have nothing in flight.
            handedUpTo = 0
            outboxDirty = true
            try? outbox.releaseRefusals()
            for filter in settings.subscriptions { try? transport.subscribe(filter, qos: .atLeastOnce) }
            _ = try? transport.publish(MQTTPublish(topic: settings.statusTopic, payload: PresencePayload.encode(state: "online", birth: birth),
                                                   qos: .atLeastOnce, retain: true))
            reports.append(.connected(birth: birth, sessionPresent: sessionPresent, endpoint: currentEndpoint))
        case .connectRefused(let code):
            transport.disconnect()
            scheduleRetry(nowMillis: nowMillis, because: MQTTError.connectionRefused(reasonCode: code).description,
                          lost: false, reports: &reports)
        case .disconnected(let code):
            if state == .connected || !isWaiting {
                // libmosquitto passes a broker's DISCONNECT reason (>= 0x80 when it threw us out,
                // e.g. 0x8E session taken over) or its own error number for a lost connection.
                let reason = MQTTReasonCode.isRefusal(code) ? "disconnected by the broker (reason \(MQTTReasonCode.describe(code)))"
                                                            : "disconnected (reason \(code))"
                scheduleRetry(nowMillis: nowMillis, because: reason, lost: true, reports: &reports)
            }
        case .subscribed(let filter, let code):
            if MQTTReasonCode.isRefusal(code) { reports.append(.subscriptionRefused(topicFilter: filter, reasonCode: code)) }
        case .published(let messageID, let reasonCode):
            guard let message = inFlight.removeValue(forKey: messageID) else { return } // presence publishes
            if !MQTTReasonCode.isRefusal(reasonCode) {
                do { try outbox.acknowledge(id: message.id) } catch { lastError = "outbox acknowledge: \(error)" }
                retained.acknowledged(message)
            } else {
                try? outbox.recordRefusal(id: message.id, reasonCode: reasonCode, atMillis: nowMillis)
                lastError = "broker refused publish to \(message.topic) (reason \(MQTTReasonCode.describe(reasonCode)))"
                reports.append(.refused(outboxID: message.id, topic: message.topic, reasonCode: reasonCode))
            }
        case .message(let inbound):
            reports.append(.inbound(inbound))
        }
    }

    private func pump(nowMillis: UInt64, reports: inout [CloudLinkReport]) {
        let room = settings.window - inFlight.count
        // Refill in batches: one outbox read per quarter window, not one per acknowledgement.
        guard room > 0, inFlight.isEmpty || room >= max(1, settings.window / 4) else { return }
        let batch: [OutboxMessage]
        let handed = Set(inFlight.values.lazy.map(\.id).filter { $0 > self.handedUpTo })
        let limit = room + handed.count
        do {
            batch = try outbox.pending(afterID: handedUpTo, limit: limit)
        } catch {
            lastError = "outbox read: \(error)"
            return
        }
        // A short read saw everything after handedUpTo: once it is handed over, nothing is
        // left to read until the store says otherwise. A full one may have left some behind.
        let sawAll = batch.count < limit
        if replayDue && handedUpTo == 0 {
            // Before anything newer, so a newer message on the same topic still wins.
            replayDue = false
            for publish in retained.replay(pending: batch) { _ = try? transport.publish(publish) }
        }
        var published = 0
        for message in batch {
            if handed.contains(message.id) {
                handedUpTo = message.id  // already with libmosquitto, which resends it
                continue
            }
            guard published < room else { return }
            let publish = MQTTPublish(topic: message.topic, payload: message.payload, qos: MQTTQoS(outbox: message.qos), retain: message.retain,
                                      userProperties: [MQTTUserProperty("uuid", message.uuid), MQTTUserProperty("seq", String(message.sequence))])
            do {
                let mid = try transport.publish(publish)
                inFlight[mid] = message
                handedUpTo = message.id
                published += 1
            } catch {
                lastError = "publish: \(error)"
                return
            }
        }
        if sawAll { outboxDirty = false }
    }
}

/// The presence payload on vehicles/{id}/status: {"state":"online|offline|lost","birth":N}.
public enum PresencePayload {
    public static func encode(state: String, birth: UInt64) -> [UInt8] {
        Array("{\"state\":\"\(state)\",\"birth\":\(birth)}".utf8)
    }
}

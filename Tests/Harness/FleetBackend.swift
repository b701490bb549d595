// The fleet back end: one MQTT v5 client per broker node it is given (one on a cluster's
// surviving node; one on each node of unrelated brokers), subscribed to every car's events,
// presence and results, reconnecting by itself when its node goes away. It records the first
// arrival (monotonic) of every event UUID and how often it came, every presence message, and
// the arrival of each remote command's result; per car, the `seq` of every event it got and
// the answers to its `resendEvents` requests (FleetResend); and it publishes the commands the
// test hands it, from its own thread (the transport is serviced there only).
#if canImport(Glibc)
import Glibc
#endif
import Synchronization
import Drivers

public final class FleetBackend: @unchecked Sendable {
    public struct Arrival: Sendable {
        public var first: Double
        public var count: Int
    }

    public struct Gap: Sendable, CustomStringConvertible {
        public var node: Int
        public var lost: Double
        public var back: Double?
        public var sessionResumed: Bool?
        public var description: String {
            "node \(node) client down at \(lost), back \(back.map { "after \(Int(($0 - lost) * 1000)) ms" } ?? "never"), "
                + "session \(sessionResumed.map { $0 ? "resumed" : "NEW (queued messages gone)" } ?? "-")"
        }
    }

    /// A car's answer to a `resendEvents` request.
    public struct ResendAnswer: Sendable {
        public var result: String
        /// The `reason` of a refusal (e.g. "rateLimited"), nil when accepted.
        public var reason: String?
        /// Events the car queued again (0 when refused).
        public var count: Int
    }

    public struct Presence: Sendable {
        public var state: String
        public var birth: Int64
        public var at: Double
    }

    private struct State {
        var events: [String: Arrival] = [:]
        var eventMessages = 0
        var presence: [String: [Presence]] = [:]
        /// Remote command UUID -> first result arrival, and the result text.
        var results: [String: (at: Double, result: String)] = [:]
        /// Vehicle -> the `seq` of every event received from it (user property, else payload).
        var sequences: [String: Set<Int64>] = [:]
        /// `resendEvents` request ID -> the car's answer.
        var resendAnswers: [String: ResendAnswer] = [:]
        /// Per connection: messages waiting for its thread.
        var outgoing: [[MQTTPublish]] = []
        var reconnects = 0
        /// Each time a connection dropped: monotonic seconds it went, came back, and whether the
        /// node still had our session (if not, what arrived meanwhile is lost to us, not the car).
        var gaps: [Gap] = []
        var running = true
    }

    private let state = Mutex(State())
    private var threads: [SystemThread] = []
    private let connections: [Connection]

    /// `nodes`: connect options per node to subscribe on.
    public init(nodes: [MQTTConnectOptions]) throws {
        connections = try nodes.enumerated().map { try Connection(options: $0.element, index: $0.offset) }
        state.withLock { $0.outgoing = Array(repeating: [], count: nodes.count) }
        for connection in connections { connection.backend = self }
        for connection in connections {
            threads.append(HarnessThread.start(connection) { $0.loop() })
        }
    }

    deinit { stop() }

    public func stop() {
        state.withLock { $0.running = false }
        for thread in threads { thread.join() }
        threads = []
    }

    /// Waits (bounded) until every node's connection has subscribed once.
    public func waitSubscribed(seconds: Double) -> Bool {
        let deadline = Monotonic.seconds() + seconds
        while Monotonic.seconds() < deadline {
            if connections.allSatisfy({ $0.subscribedOnce.load(ordering: .acquiring) }) { return true }
            usleep(20_000)
        }
        return false
    }

    /// Queues `message` on every connection (a cluster back end has one; unrelated brokers need
    /// it on each, since the car may be on either: the car answers a command once, by UUID).
    public func publish(_ message: MQTTPublish) {
        state.withLock { value in for index in value.outgoing.indices { value.outgoing[index].append(message) } }
    }

    public var events: [String: Arrival] { state.withLock { $0.events } }
    public var eventMessages: Int { state.withLock { $0.eventMessages } }
    public var presence: [String: [Presence]] { state.withLock { $0.presence } }
    public var results: [String: (at: Double, result: String)] { state.withLock { $0.results } }
    public var reconnects: Int { state.withLock { $0.reconnects } }
    public var sequences: [String: Set<Int64>] { state.withLock { $0.sequences } }
    public var resendAnswers: [String: ResendAnswer] { state.withLock { $0.resendAnswers } }
    public var gaps: [Gap] { state.withLock { $0.gaps } }

    fileprivate var isRunning: Bool { state.withLock { $0.running } }

    fileprivate func takeOutgoing(_ index: Int) -> [MQTTPublish] {
        state.withLock { value in defer { value.outgoing[index].removeAll() }; return value.outgoing[index] }
    }

    fileprivate func requeue(_ messages: [MQTTPublish], _ index: Int) {
        state.withLock { $0.outgoing[index] = messages + $0.outgoing[index] }
    }

    fileprivate func dropped(_ node: Int) { state.withLock { $0.gaps.append(Gap(node: node, lost: Monotonic.seconds())) } }

    fileprivate func reconnected(_ node: Int, sessionPresent: Bool) {
        state.withLock { value in
            value.reconnects += 1
            if let last = value.gaps.lastIndex(where: { $0.node == node && $0.back == nil }) {
                value.gaps[last].back = Monotonic.seconds()
                value.gaps[last].sessionResumed = sessionPresent
            }
        }
    }

    fileprivate func received(_ message: MQTTInbound, at now: Double) {
        let parts = message.topic.split(separator: "/")
        guard parts.count == 3, parts[0] == "vehicles" else { return }
        guard case .object(let fields)? = try? JSONTree.parse(message.payload) else { return }
        let vehicle = String(parts[1])
        switch parts[2] {
        case "events":
            guard let id = fields["id"]?.stringValue else { return }
            var seq = message.userProperties.first { $0.name == "seq" }.flatMap { Int64($0.value) }
            if seq == nil, case .integer(let value)? = fields["seq"] { seq = value }
            state.withLock {
                if let seq { $0.sequences[vehicle, default: []].insert(seq) }
                $0.eventMessages += 1
                if var seen = $0.events[id] {
                    seen.count += 1
                    $0.events[id] = seen
                } else {
                    $0.events[id] = Arrival(first: now, count: 1)
                }
            }
        case "status":
            guard let presence = fields["state"]?.stringValue, case .integer(let birth)? = fields["birth"] else { return }
            state.withLock { $0.presence[vehicle, default: []].append(Presence(state: presence, birth: birth, at: now)) }
        case "results" where fields["type"]?.stringValue == "resendEvents":
            guard let request = fields["request"]?.stringValue else { return }
            var count = 0
            if case .integer(let value)? = fields["count"] { count = Int(value) }
            let answer = ResendAnswer(result: fields["result"]?.stringValue ?? "?", reason: fields["reason"]?.stringValue, count: count)
            state.withLock { if $0.resendAnswers[request] == nil { $0.resendAnswers[request] = answer } }
        case "results":
            guard let command = fields["command"]?.stringValue else { return }
            let result = fields["result"]?.stringValue ?? "?"
            state.withLock { if $0.results[command] == nil { $0.results[command] = (now, result) } }
        default:
            return
        }
    }

    public static let filters = ["vehicles/+/events", "vehicles/+/status", "vehicles/+/results"]

    /// One node's client and its service loop.
    fileprivate final class Connection: @unchecked Sendable {
        let transport: MosquittoTransport
        weak var backend: FleetBackend?
        let subscribedOnce = Atomic<Bool>(false)
        let index: Int

        init(options: MQTTConnectOptions, index: Int) throws {
            transport = try MosquittoTransport(options: options)
            self.index = index
        }

        func loop() {
            var connected = false, connecting = false, everConnected = false
            var nextAttempt = 0.0
            while let backend, backend.isRunning {
                if !connected && !connecting && Monotonic.seconds() >= nextAttempt {
                    connecting = (try? transport.connect()) != nil
                    if !connecting { nextAttempt = Monotonic.seconds() + 0.5 }
                }
                guard connected || connecting else { usleep(50_000); continue }
                let (events, error) = transport.service(timeoutMillis: 20)
                for event in events {
                    switch event {
                    case .connected(let sessionPresent):
                        connected = true
                        connecting = false
                        if everConnected { backend.reconnected(index, sessionPresent: sessionPresent) }
                        everConnected = true
                        // Again after every reconnect: a node that lost our session lost these too.
                        for filter in FleetBackend.filters { try? transport.subscribe(filter, qos: .atLeastOnce) }
                        subscribedOnce.store(true, ordering: .releasing)
                    case .message(let message):
                        backend.received(message, at: Monotonic.seconds())
                    case .connectRefused, .disconnected:
                        if connected { backend.dropped(index) }
                        connected = false
                        connecting = false
                        nextAttempt = Monotonic.seconds() + 0.5
                    default:
                        break
                    }
                }
                if error != nil {
                    if connected { backend.dropped(index) }
                    connected = false
                    connecting = false
                    nextAttempt = Monotonic.seconds() + 0.5
                }
                if connected {
                    // A refused publish (the link just went) is put back for the next connection.
                    let refused = backend.takeOutgoing(index).filter { (try? transport.publish($0)) == nil }
                    if !refused.isEmpty { backend.requeue(refused, index) }
                }
            }
            transport.disconnect()
        }
    }
}

// The figures of one fleet run and the two lines it prints: a `fleet:` summary for people and
// a `fleet-json:` object for docs and scripts (scripts/fleet-report.sh pulls both out of a log).
public struct FleetReport: Sendable {
    public var brokers = ""
    public var cars = 0
    /// "failover" (each car given both nodes) or "split" (one node per car).
    public var carURLs = ""
    public var seconds = 0.0
    public var startupSeconds = 0.0
    /// Event rows in the cars' logs, and how many never reached the back end.
    public var events = 0
    public var lost = 0
    /// Of the lost: still in a car's outbox at the end (no broker acknowledged them: the car's
    /// fault or not yet drained), and acknowledged by a broker node but never delivered to the
    /// back end (the broker lost them, e.g. with a subscriber session it dropped).
    public var lostInCarOutbox = 0
    public var lostAfterBrokerAck: Int { lost - lostInCarOutbox }
    /// Events the back end still lacked after the drain that arrived only once it asked the
    /// car to publish them again (`resendEvents`, FleetResend): lost past a broker's
    /// acknowledgement, recovered end to end. Not counted in `lost`.
    public var recovered = 0
    /// `resendEvents` requests sent (all cars), and how many events the cars queued again.
    public var resendRequests = 0
    public var resendQueued = 0
    /// Times the back end came back to a node that no longer had its persistent session, so
    /// the broker dropped whatever it had queued for it.
    public var backendSessionsDropped = 0
    /// Event messages that arrived more than once (extra copies).
    public var duplicates = 0
    public var sessionsOK = 0
    public var sessionsOther: [String: Int] = [:]
    public var latencyMillis: [Double] = []
    public var remoteSent = 0
    public var remoteAnswered = 0
    public var remoteLatencyMillis: [Double] = []
    public var agentRSSKB: [Int] = []
    public var agentCPUPercent: [Double] = []
    public var brokerRSSKB: [Int?] = []
    public var killedNode = 0
    /// Times the back end's own connection had to reconnect (0 expected: it is on the node that stays up).
    public var backendReconnects = 0
    public var affectedCars = 0
    /// Kill -9 of the node until every car that lost it was connected again before the node
    /// came back (nil: not all were, e.g. each car knows one node only).
    public var failoverSeconds: Double?
    /// Cars that (re)connected after the restart: those still waiting for the node, and those
    /// the rejoining node knocked off the other one.
    public var stormCars = 0
    /// The restart command until every one of them was connected again (nil: not all were).
    public var stormSeconds: Double?
    /// How long the node's restart took (until it listened again and rejoined).
    public var restartSeconds = 0.0

    public init() {}

    public static func percentile<T: Comparable>(_ values: [T], _ fraction: Double) -> T? {
        guard !values.isEmpty else { return nil }
        let sorted = values.sorted()
        let rank = Int((fraction * Double(sorted.count)).rounded(.up)) - 1
        return sorted[min(max(rank, 0), sorted.count - 1)]
    }

    static func text(_ value: Double?, digits: Int = 1) -> String {
        guard let value else { return "null" }
        var scale = 1.0
        for _ in 0..<digits { scale *= 10 }
        let rounded = (value * scale).rounded() / scale
        return digits == 0 ? String(Int(rounded)) : String(rounded)
    }

    var meanCPU: Double? { agentCPUPercent.isEmpty ? nil : agentCPUPercent.reduce(0, +) / Double(agentCPUPercent.count) }

    public var summaryLine: String {
        let latency = latencyMillis, rss = agentRSSKB
        return "fleet: brokers=\(brokers) cars=\(cars) urls=\(carURLs) seconds=\(Self.text(seconds, digits: 0)) "
            + "startup_s=\(Self.text(startupSeconds)) events=\(events) lost=\(lost) lost_in_car=\(lostInCarOutbox) lost_after_broker_ack=\(lostAfterBrokerAck) recovered=\(recovered) "
            + "resend_requests=\(resendRequests) resend_queued=\(resendQueued) dup=\(duplicates) sessions_ok=\(sessionsOK) "
            + "latency_ms median=\(Self.text(Self.percentile(latency, 0.5))) p99=\(Self.text(Self.percentile(latency, 0.99))) "
            + "max=\(Self.text(latency.max())) "
            + "remote_status=\(remoteAnswered)/\(remoteSent) remote_ms median=\(Self.text(Self.percentile(remoteLatencyMillis, 0.5))) "
            + "p99=\(Self.text(Self.percentile(remoteLatencyMillis, 0.99))) "
            + "agent_rss_kb median=\(Self.percentile(rss, 0.5).map(String.init) ?? "null") max=\(rss.max().map(String.init) ?? "null") "
            + "agent_cpu_pct_per_car=\(Self.text(meanCPU, digits: 3)) max=\(Self.text(agentCPUPercent.max(), digits: 3)) "
            + "broker_rss_kb=[\(brokerRSSKB.map { $0.map(String.init) ?? "null" }.joined(separator: ","))] "
            + "killed_node=\(killedNode) affected_cars=\(affectedCars) failover_s=\(Self.text(failoverSeconds)) "
            + "storm_cars=\(stormCars) storm_s=\(Self.text(stormSeconds)) restart_s=\(Self.text(restartSeconds)) backend_reconnects=\(backendReconnects) "
            + "backend_sessions_dropped=\(backendSessionsDropped)"
    }

    public var jsonLine: String {
        let others = sessionsOther.sorted { $0.key < $1.key }.map { "\"\($0.key)\":\($0.value)" }.joined(separator: ",")
        let fields: [(String, String)] = [
            ("brokers", "\"\(brokers)\""), ("cars", "\(cars)"), ("carURLs", "\"\(carURLs)\""),
            ("seconds", Self.text(seconds)), ("startupSeconds", Self.text(startupSeconds)),
            ("events", "\(events)"), ("lost", "\(lost)"), ("lostInCarOutbox", "\(lostInCarOutbox)"),
            ("lostAfterBrokerAck", "\(lostAfterBrokerAck)"), ("recovered", "\(recovered)"),
            ("resendRequests", "\(resendRequests)"), ("resendQueued", "\(resendQueued)"), ("backendSessionsDropped", "\(backendSessionsDropped)"), ("duplicates", "\(duplicates)"),
            ("sessionsOK", "\(sessionsOK)"), ("sessionsOther", "{\(others)}"),
            ("latencySamples", "\(latencyMillis.count)"),
            ("latencyMedianMs", Self.text(Self.percentile(latencyMillis, 0.5))),
            ("latencyP99Ms", Self.text(Self.percentile(latencyMillis, 0.99))),
            ("latencyMaxMs", Self.text(latencyMillis.max())),
            ("remoteStatusSent", "\(remoteSent)"), ("remoteStatusAnswered", "\(remoteAnswered)"),
            ("remoteMedianMs", Self.text(Self.percentile(remoteLatencyMillis, 0.5))),
            ("remoteP99Ms", Self.text(Self.percentile(remoteLatencyMillis, 0.99))),
            ("agentRSSKBMedian", Self.percentile(agentRSSKB, 0.5).map(String.init) ?? "null"),
            ("agentRSSKBMax", agentRSSKB.max().map(String.init) ?? "null"),
            ("agentCPUPercentPerCar", Self.text(meanCPU, digits: 3)),
            ("agentCPUPercentMax", Self.text(agentCPUPercent.max(), digits: 3)),
            ("brokerRSSKB", "[\(brokerRSSKB.map { $0.map(String.init) ?? "null" }.joined(separator: ","))]"),
            ("killedNode", "\(killedNode)"), ("affectedCars", "\(affectedCars)"),
            ("failoverSeconds", Self.text(failoverSeconds)), ("stormSeconds", Self.text(stormSeconds)),
            ("stormCars", "\(stormCars)"), ("restartSeconds", Self.text(restartSeconds)), ("backendReconnects", "\(backendReconnects)"),
        ]
        return "fleet-json: {" + fields.map { "\"\($0.0)\":\($0.1)" }.joined(separator: ",") + "}"
    }
}

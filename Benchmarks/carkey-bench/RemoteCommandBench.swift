// Remote command round trip: a signed command published on vehicles/{id}/cmd until its result
// arrives on vehicles/{id}/results, through the carkey-agent (`run --simulate --mqtt`, a fleet
// key from its config file) and a local mosquitto. References from the same run and broker,
// interleaved so a noisy neighbour hits every figure:
//
//   echo     the client's own QoS 1 message back through its subscription (transport alone);
//   relay    the car's message pattern without the car: a second client receives the QoS 1
//            request and answers at QoS 2 on another topic (what the car does, minus its work).
//
//   status_*     `status` (verify, UUID + event + result in one commit, no actuator)
//   actuation_*  alternating unlock/lock (two commits and the simulated pulse)
//   ratio_status_to_relay   status median / relay median (the car's own cost on this path)
#if canImport(Glibc)
import Glibc
#endif
import Drivers
import Protocol
import TestHarness

enum RemoteCommandBench {
    static let vehicle = "OCK-SIM-0001"

    static func run(rounds: Int = 3, statusPerRound: Int = 60, locksPerRound: Int = 8) throws {
        let agentPath = AgentProcess.sibling("carkey-agent")
        guard access(agentPath, X_OK) == 0 else {
            Bench.emit([("benchmark", "remote_command"), ("skipped", "no \(agentPath): build it with --product carkey-agent")])
            return
        }
        let broker = try MosquittoBroker()
        try broker.start()
        defer { broker.stop() }
        let folder = TestFolders.make(prefix: "carkey-bench-remote")
        defer { TestFolders.remove(folder) }
        let fleet = try P256PrivateKey.generate()
        let config = folder + "/agent.json"
        let text = #"{"remote": {"allowUnlock": true, "fleetKeys": ["\#(fleet.publicKey.sec1.hexString)"]}}"#
        guard let file = fopen(config, "w") else { throw BenchFailure(description: "cannot write \(config)") }
        fputs(text, file)
        fclose(file)
        let agent = try AgentProcess(agentPath, ["run", "--simulate", "--state-dir", folder + "/state", "--config", config,
                                                 "--mqtt", broker.url, "--clock-sync", "yes"])
        defer { agent.stop() }
        guard agent.wait(timeoutSeconds: 30, until: { agent.stderr.contains("cloud: connected") }) else {
            throw BenchFailure(description: "agent did not connect: \(agent.stderrTail)")
        }
        let client = try BenchMQTTClient(url: broker.url, subscriptions: ["vehicles/\(vehicle)/results", "bench/echo", "bench/answer"])
        let relay = try BenchMQTTClient(url: broker.url, subscriptions: ["bench/request"], clientID: "bench-relay-\(getpid())")
        var status: [Double] = [], locks: [Double] = [], reference: [Double] = [], relayed: [Double] = []
        _ = try roundTrip(client, fleet: fleet, action: .status)  // warm-up
        for _ in 0..<rounds {
            for _ in 0..<statusPerRound { reference.append(try client.echo()) }
            for _ in 0..<statusPerRound { relayed.append(try client.relayed(through: relay)) }
            for _ in 0..<statusPerRound { status.append(try roundTrip(client, fleet: fleet, action: .status)) }
            for index in 0..<locksPerRound {
                locks.append(try roundTrip(client, fleet: fleet, action: index % 2 == 0 ? .unlock : .lock))
            }
        }
        let referenceMedian = Bench.median(reference)
        Bench.emit([("benchmark", "remote_command"),
                    ("path", "carkey command's signed status/unlock/lock published on vehicles/{id}/cmd through a local mosquitto (set_tcp_nodelay) to the release carkey-agent --simulate --mqtt, until its result arrives on vehicles/{id}/results; references: the client's own message echoed by the broker, and a second client answering at QoS 2 as the car does"),
                    ("status_median_ms", Bench.median(status)), ("status_p99_ms", percentile(status, 0.99)),
                    ("actuation_median_ms", Bench.median(locks)), ("actuation_p99_ms", percentile(locks, 0.99)),
                    ("reference_echo_median_ms", referenceMedian), ("reference_echo_p99_ms", percentile(reference, 0.99)),
                    ("reference_relay_median_ms", Bench.median(relayed)), ("reference_relay_p99_ms", percentile(relayed, 0.99)),
                    ("ratio_status_to_relay", Bench.median(relayed) > 0 ? Bench.median(status) / Bench.median(relayed) : 0),
                    ("samples", status.count), ("actuation_samples", locks.count)])
    }

    static func roundTrip(_ client: BenchMQTTClient, fleet: P256PrivateKey, action: RemoteAction) throws -> Double {
        let now = Int64(time(nil))
        let command = try RemoteCommand.issue(by: fleet, commandID: try SystemRandom().randomBytes(16), vehicleID: try VehicleID(vehicle),
                                              action: action, issuedAt: UInt32(now), lifetimeSeconds: 30)
        let envelope = #"{"id":"\#(RemoteCommand.uuidString(try SystemRandom().randomBytes(16)))","type":"command","body":"\#(command.encoded().hexString)"}"#
        let marker = #""command":"\#(command.uuidString)""#
        return try client.timed(publish: "vehicles/\(vehicle)/cmd", payload: envelope) { text in
            guard text.contains(marker) else { return false }
            guard text.contains(#""result":"ok""#) else { throw BenchFailure(description: "remote command refused: \(text)") }
            return true
        }
    }

    static func percentile(_ values: [Double], _ p: Double) -> Double {
        let sorted = values.sorted()
        guard !sorted.isEmpty else { return 0 }
        return sorted[min(sorted.count - 1, Int((Double(sorted.count) * p).rounded(.up)) - 1)]
    }
}

/// One libmosquitto client serviced on the bench thread: publish, then poll until the answer.
final class BenchMQTTClient {
    private let transport: MosquittoTransport

    init(url: String, subscriptions: [String], clientID: String = "bench-remote-\(getpid())") throws {
        transport = try MosquittoTransport(options: MQTTConnectOptions(endpoint: try MQTTEndpoint(url: url),
                                                                       clientID: clientID, sessionExpirySeconds: 0))
        try transport.connect()
        var connected = false
        for _ in 0..<200 where !connected {
            connected = transport.service(timeoutMillis: 25).events.contains { if case .connected = $0 { return true } else { return false } }
        }
        guard connected else { throw BenchFailure(description: "bench client did not connect") }
        for topic in subscriptions { try transport.subscribe(topic, qos: .atLeastOnce) }
        for _ in 0..<10 { _ = transport.service(timeoutMillis: 10) }
    }

    deinit { transport.disconnect() }

    /// Milliseconds from publish until `done` accepts a message (at most 10 s).
    func timed(publish topic: String, payload: String, relay: BenchMQTTClient? = nil, done: (String) throws -> Bool) throws -> Double {
        let start = Bench.now()
        _ = try transport.publish(MQTTPublish(topic: topic, payload: Array(payload.utf8), qos: .atLeastOnce))
        while Bench.now() - start < 10_000_000_000 {
            if let relay { try relay.answerRequests() }
            for event in transport.service(timeoutMillis: relay == nil ? 5 : 1).events {
                if case .message(let message) = event, try done(String(decoding: message.payload, as: UTF8.self)) {
                    return Double(Bench.now() - start) / 1e6
                }
            }
        }
        throw BenchFailure(description: "no answer on \(topic) within 10 s")
    }

    /// The relay reference: `relay` answers our QoS 1 request at QoS 2, as the car does.
    func relayed(through relay: BenchMQTTClient) throws -> Double {
        let token = RemoteCommand.uuidString(try SystemRandom().randomBytes(16))
        return try timed(publish: "bench/request", payload: token, relay: relay) { $0 == token }
    }

    /// On the relay side: every request seen is answered on bench/answer at QoS 2.
    func answerRequests() throws {
        for event in transport.service(timeoutMillis: 0).events {
            if case .message(let message) = event, message.topic == "bench/request" {
                _ = try transport.publish(MQTTPublish(topic: "bench/answer", payload: message.payload, qos: .exactlyOnce))
            }
        }
    }

    /// The echo reference: our own QoS 1 message back through the broker.
    func echo() throws -> Double {
        let token = RemoteCommand.uuidString(try SystemRandom().randomBytes(16))
        return try timed(publish: "bench/echo", payload: token) { $0 == token }
    }
}

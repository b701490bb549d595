// The agent's cloud link against a real mosquitto broker: presence (online, offline, lost),
// and the reliability soak: kill -9 the agent at random moments while events flow, restart
// it, and check that every event in the event log reaches a subscriber.
import XCTest
import Drivers
import Protocol
import TestHarness
#if canImport(Glibc)
import Glibc
#endif

final class CloudAgentTests: XCTestCase {
    private var root = ""
    private var stateDir: String { root + "/state" }
    private let vehicle = "OCK-SIM-0001"

    override func setUpWithError() throws {
        root = Subprocess.makeTemporaryDirectory()
    }

    override func tearDown() {
        Subprocess.removeTree(root)
    }

    private func startAgent(_ broker: MosquittoBroker, willDelay: Int = 0) throws -> BackgroundProcess {
        let process = try BackgroundProcess("carkey-agent", ["run", "--simulate", "--state-dir", stateDir, "--mqtt", broker.url,
                                                             "--mqtt-will-delay", String(willDelay)])
        let up = process.wait(timeoutSeconds: 20) { process.stderr.contains("cloud: connected") }
        XCTAssertTrue(up, "agent did not connect: \(process.stdout) \(process.stderr)")
        return process
    }

    private func statusPayloads(_ subscriber: CloudTestSubscriber) -> [String] {
        subscriber.received.filter { $0.topic.hasSuffix("/status") }.map { String(decoding: $0.payload, as: UTF8.self) }
    }

    func testPresenceIsOnlineThenLostAfterKill9AndOfflineAfterACleanStop() throws {
        let broker = try MosquittoBroker()
        try broker.start()
        let subscriber = try CloudTestSubscriber(url: broker.url, filter: "vehicles/\(vehicle)/status")

        let first = try startAgent(broker)
        XCTAssertTrue(subscriber.wait(seconds: 5) { self.statusPayloads(subscriber).last == #"{"state":"online","birth":1}"# })
        first.stop(signal: SIGKILL)
        XCTAssertTrue(subscriber.wait(seconds: 10) { self.statusPayloads(subscriber).last == #"{"state":"lost","birth":1}"# },
                      "the broker publishes the will after kill -9: \(statusPayloads(subscriber))")

        let second = try startAgent(broker)
        XCTAssertTrue(subscriber.wait(seconds: 5) { self.statusPayloads(subscriber).last == #"{"state":"online","birth":2}"# },
                      "a restart announces a higher birth: \(statusPayloads(subscriber))")
        XCTAssertEqual(second.stop(signal: SIGTERM), 0)
        XCTAssertTrue(subscriber.wait(seconds: 5) { self.statusPayloads(subscriber).last == #"{"state":"offline","birth":2}"# },
                      "a clean stop says offline: \(statusPayloads(subscriber))")
        // The will was discarded by the clean DISCONNECT: nothing follows "offline".
        _ = subscriber.wait(seconds: 1.5) { false }
        XCTAssertEqual(statusPayloads(subscriber).last, #"{"state":"offline","birth":2}"#)
    }

    func testEventsWrittenWhileTheBrokerIsDownArriveWhenItComesUp() throws {
        let broker = try MosquittoBroker()
        let agent = try BackgroundProcess("carkey-agent", ["run", "--simulate", "--state-dir", stateDir, "--mqtt", broker.url])
        XCTAssertTrue(agent.wait(timeoutSeconds: 20) { agent.stderr.contains("cloud: connect failed") }, agent.stderr)
        let producer = try EventProducer(stateDir: stateDir, vehicle: vehicle)
        let written = try producer.append(count: 20)
        try broker.start()
        let subscriber = try CloudTestSubscriber(url: broker.url, filter: "vehicles/\(vehicle)/events")
        // The first retry comes 2 s (plus jitter) after the failure.
        XCTAssertTrue(subscriber.wait(seconds: 15) { Set(subscriber.eventIDs).isSuperset(of: written) }, "\(subscriber.eventIDs.count) of \(written.count)")
        XCTAssertEqual(subscriber.eventSequences.filter { $0 > 0 }, subscriber.eventSequences.sorted(), "in order")
        agent.stop()
    }

    /// `CARKEY_SOAK_ROUNDS` sets the number of kill -9 rounds (make soak: 50).
    func testKill9AtRandomMomentsLosesNoEvent() throws {
        let rounds = Int(String(cString: getenv("CARKEY_SOAK_ROUNDS") ?? strdup("6"))) ?? 6
        let broker = try MosquittoBroker()
        try broker.start()
        let subscriber = try CloudTestSubscriber(url: broker.url, filter: "vehicles/\(vehicle)/events")
        var generator = SystemRandomNumberGenerator()
        var written = Set<String>()
        let producer = try EventProducer(stateDir: stateDir, vehicle: vehicle)
        for _ in 0..<rounds {
            let agent = try startAgent(broker)
            written.formUnion(try producer.append(count: Int.random(in: 5...40, using: &generator)))
            // Let some of it flow, then kill at a random moment.
            _ = subscriber.wait(seconds: Double(Int.random(in: 0...300, using: &generator)) / 1000) { false }
            written.formUnion(try producer.append(count: Int.random(in: 0...10, using: &generator)))
            agent.stop(signal: SIGKILL)
        }
        let final = try startAgent(broker)
        let complete = subscriber.wait(seconds: 30) { Set(subscriber.eventIDs).isSuperset(of: written) }
        final.stop()
        let received = subscriber.eventIDs
        let duplicates = received.count - Set(received).count
        print("soak: \(rounds) kill -9 rounds, \(written.count) events written, \(Set(received).count) delivered, \(duplicates) duplicates")
        XCTAssertTrue(complete, "missing \(written.subtracting(received).count) of \(written.count) events")
        XCTAssertEqual(Set(received), written, "nothing but the event log's events arrive")
        XCTAssertEqual(try producer.store.lastEventSequence(), Int64(written.count))
    }
}

/// Appends audit events from the test process into the agent's store, routed into the outbox
/// in the same transaction exactly as the agent routes its own (SQLite WAL serialises writers).
final class EventProducer {
    let store: CarStore
    init(stateDir: String, vehicle: String) throws {
        store = try CarStore.open(stateDirectory: stateDir)
        try store.routeEvents(EventPayload.router(CloudTopics(vehicleID: vehicle)))
    }

    /// Returns the UUIDs of the events written.
    func append(count: Int) throws -> Set<String> {
        var ids = Set<String>()
        for i in 0..<count {
            let stored = try store.appendEvent(NewEvent(kind: .accessDecision, time: EventTime(seconds: 1_800_000_000, trusted: true),
                                                        actor: "00112233445566ff", action: EventAction(unlisted: "unlock"), result: "allowed",
                                                        detailJSON: #"{"n":\#(i)}"#))
            ids.insert(stored.uuid)
        }
        return ids
    }
}

/// A subscriber serviced on its own thread, so waits in the test see messages as they come.
/// The thread holds only the inner `Pump`, never the subscriber, so the subscriber's deinit
/// (at the end of the test's scope) stops and joins it: a thread holding the subscriber kept
/// every one alive, and polling, for the rest of the run.
final class CloudTestSubscriber: @unchecked Sendable {
    private final class Pump: @unchecked Sendable {
        // @unchecked Sendable: `messages` and `running` are guarded by `lock`.
        let transport: MosquittoTransport
        let lock = Lock()
        var messages: [MQTTInbound] = []
        var running = true

        init(transport: MosquittoTransport) { self.transport = transport }

        func loop() {
            while lock.withLock({ running }) {
                let (events, error) = transport.service(timeoutMillis: 20)
                // Without a connection (a test killed the broker) libmosquitto returns at once:
                // wait out the timeout instead of spinning a core.
                if error != nil { usleep(20_000) }
                for event in events {
                    if case .message(let message) = event { lock.withLock { messages.append(message) } }
                }
            }
        }
    }

    private let pump: Pump
    private let thread: SystemThread

    init(url: String, filter: String) throws {
        let transport = try MosquittoTransport(options: MQTTConnectOptions(endpoint: MQTTEndpoint(url: url),
                                                                           clientID: "test-sub-\(getpid())-\(UInt32.random(in: 0...UInt32.max))",
                                                                           sessionExpirySeconds: 0))
        try transport.connect()
        var connected = false
        for _ in 0..<100 where !connected {
            connected = transport.service(timeoutMillis: 50).events.contains { if case .connected = $0 { return true } else { return false } }
        }
        guard connected else { throw MQTTError.notConnected(clientID: "test subscriber") }
        try transport.subscribe(filter, qos: .atLeastOnce)
        let pump = Pump(transport: transport)
        self.pump = pump
        thread = try SystemThread.start(name: "test-subscriber") { pump.loop() }
    }

    deinit {
        pump.lock.withLock { pump.running = false }
        thread.join()
        pump.transport.disconnect()
    }

    var received: [MQTTInbound] { pump.lock.withLock { pump.messages } }

    /// The "id" of each event payload received, in arrival order.
    var eventIDs: [String] { received.compactMap { Self.field("id", in: $0.payload) } }
    var eventSequences: [Int] { received.compactMap { Self.field("seq", in: $0.payload).flatMap { Int($0) } } }

    /// Polls `condition` every 20 ms for at most `seconds`.
    func wait(seconds: Double, until condition: () -> Bool) -> Bool {
        let deadline = Self.now() + seconds
        while Self.now() < deadline {
            if condition() { return true }
            usleep(20_000)
        }
        return condition()
    }

    /// A top-level string or number field of our flat JSON payloads (enough for the tests).
    static func field(_ name: String, in payload: [UInt8]) -> String? {
        let text = String(decoding: payload, as: UTF8.self)
        guard let range = text.range(of: "\"\(name)\":") else { return nil }
        var value = text[range.upperBound...]
        if value.hasPrefix("\"") {
            value = value.dropFirst()
            return value.firstIndex(of: "\"").map { String(value[..<$0]) }
        }
        let end = value.firstIndex { $0 == "," || $0 == "}" } ?? value.endIndex
        return String(value[..<end])
    }

    private static func now() -> Double {
        var spec = timespec()
        clock_gettime(CLOCK_MONOTONIC, &spec)
        return Double(spec.tv_sec) + Double(spec.tv_nsec) / 1e9
    }
}

final class CloudAgentInboundTests: XCTestCase {
    private var root = ""
    private var stateDir: String { root + "/state" }

    override func setUpWithError() throws { root = Subprocess.makeTemporaryDirectory() }
    override func tearDown() { Subprocess.removeTree(root) }

    func testMutualTLSConnectionWithClientCertificate() throws {
        let broker = try MosquittoBroker(tls: true)
        try broker.start()
        let pki = try XCTUnwrap(broker.pki)
        let agent = try BackgroundProcess("carkey-agent", ["run", "--simulate", "--state-dir", stateDir, "--mqtt", broker.url,
                                                           "--mqtt-ca", pki.caFile, "--mqtt-cert", pki.clientCertificate,
                                                           "--mqtt-key", pki.clientKey])
        XCTAssertTrue(agent.wait(timeoutSeconds: 20) { agent.stderr.contains("cloud: connected") }, agent.stderr)
        XCTAssertEqual(agent.stop(), 0)
        // Without a client certificate the broker refuses; the agent keeps retrying, never dies.
        let anonymous = try BackgroundProcess("carkey-agent", ["run", "--simulate", "--state-dir", stateDir, "--mqtt", broker.url,
                                                               "--mqtt-ca", pki.caFile])
        XCTAssertTrue(anonymous.wait(timeoutSeconds: 20) { anonymous.stderr.contains("retry in") }, anonymous.stderr)
        XCTAssertTrue(anonymous.isRunning)
        XCTAssertFalse(anonymous.stderr.contains("cloud: connected"))
        XCTAssertEqual(anonymous.stop(), 0)
    }

    func testMalformedOversizedAndDuplicateInboundMessagesAreCountedAndChangeNothing() throws {
        let broker = try MosquittoBroker()
        try broker.start()
        let results = try CloudTestSubscriber(url: broker.url, filter: "vehicles/OCK-SIM-0001/results")
        let agent = try BackgroundProcess("carkey-agent", ["run", "--simulate", "--state-dir", stateDir, "--mqtt", broker.url])
        XCTAssertTrue(agent.wait(timeoutSeconds: 20) { agent.stderr.contains("cloud: connected") }, agent.stderr)
        let topic = "vehicles/OCK-SIM-0001/commands"
        let command = #"{"id":"6f1c2d3e-4a5b-4c6d-8e7f-001122334455","type":"command","body":"00"}"#
        let revocation = #"{"id":"7f1c2d3e-4a5b-4c6d-8e7f-001122334455","type":"revocation","body":"0102"}"#
        let oversized = String(repeating: "x", count: 9000)
        for payload in ["not json", #"{"id":"1","type":"command","body":"00"}"#, oversized, command, command, revocation] {
            XCTAssertEqual(system("mosquitto_pub -h 127.0.0.1 -p \(broker.port) -q 1 -t \(topic) -m '\(payload)'"), 0)
        }
        // Admitted messages are handled on the agent's thread at its next tick (1 s), and
        // each is answered on the results topic (QoS 2) with the request's ID.
        XCTAssertTrue(results.wait(seconds: 10) { results.received.count >= 2 }, agent.stderr)
        let answers = results.received.map { String(decoding: $0.payload, as: UTF8.self) }
        XCTAssertTrue(answers.contains { $0.contains(#""request":"6f1c2d3e-4a5b-4c6d-8e7f-001122334455","type":"command","result":"unsupported""#) }, "\(answers)")
        XCTAssertTrue(answers.contains { $0.contains(#""request":"7f1c2d3e-4a5b-4c6d-8e7f-001122334455","type":"revocation","result":"refused","fault":{"code":"#) },
                      "a revocation that is not a valid signed object is refused: \(answers)")
        XCTAssertEqual(results.received.count, 2, "the duplicate got no second answer")
        let log = agent.stderr
        XCTAssertEqual(log.components(separatedBy: "rejected: malformed").count - 1, 2)
        XCTAssertEqual(log.components(separatedBy: "rejected: oversized").count - 1, 1)
        XCTAssertEqual(log.components(separatedBy: "rejected: duplicate").count - 1, 1)
        XCTAssertFalse(log.contains("xxxxxxxx"), "payloads are never logged")
        XCTAssertEqual(agent.stop(), 0)
        let store = try CarStore.open(stateDirectory: stateDir)
        XCTAssertEqual(try store.events(since: 0, limit: 100).filter { $0.event.kind == .revocation }.count, 0,
                       "no rejected or refused inbound message changed the keychain")
    }

    func testOutboxCommandReportsDepthAndRefusesAMissingStateDirectory() throws {
        let producer = try EventProducer(stateDir: stateDir, vehicle: "OCK-SIM-0001")
        _ = try producer.append(count: 3)
        let text = try Subprocess.run("carkey-agent", ["outbox", "--state-dir", stateDir])
        XCTAssertEqual(text.status, 0, text.stderr)
        XCTAssertTrue(text.stdout.hasPrefix("depth: 3 message(s)"), text.stdout)
        let json = try Subprocess.run("carkey-agent", ["outbox", "--state-dir", stateDir, "--json"])
        XCTAssertTrue(json.stdout.hasPrefix(#"{"depth":3,"#), json.stdout)
        let missing = try Subprocess.run("carkey-agent", ["outbox", "--state-dir", root + "/nothing"])
        XCTAssertEqual(missing.status, 1)
        XCTAssertTrue(missing.stderr.contains("no agent state"), missing.stderr)
        XCTAssertEqual(access(root + "/nothing", F_OK), -1, "an inspection creates nothing")
    }
}

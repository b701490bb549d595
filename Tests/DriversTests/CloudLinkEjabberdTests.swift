// The cloud link against ejabberd's mod_mqtt (the second, independent MQTT 5 broker): the
// harness itself (private node, 2-node cluster, kill -9 and rejoin), routing across nodes,
// the car's certificate login, the 0x90 refusal and the capped session expiry.
// One single node is shared by the class; the cluster test makes its own 2-node cluster.
import XCTest
@testable import Drivers
import TestHarness
#if canImport(Glibc)
import Glibc
#endif

final class CloudLinkEjabberdTests: XCTestCase {
    nonisolated(unsafe) private static var shared: EjabberdCluster?
    nonisolated(unsafe) private static var sharedFailure: Error?

    /// Cars VIN-OK and VIN-DENIED may write status and state; only VIN-OK may write events.
    static let rules = EjabberdAccess(
        publish: [EjabberdAccess.Rule("vehicles/%c/status", [.allow(.all)]),
                  EjabberdAccess.Rule("vehicles/%c/state", [.allow(.all)]),
                  EjabberdAccess.Rule("vehicles/%c/events", [.deny(.clientID("VIN-DENIED")), .allow(.all)]),
                  EjabberdAccess.Rule("#", [.allow(.user(EjabberdCluster.defaultBackendUser))])],
        subscribe: [EjabberdAccess.Rule("vehicles/%c/#", [.allow(.all)]),
                    EjabberdAccess.Rule("#", [.allow(.user(EjabberdCluster.defaultBackendUser))])])

    static func requireEjabberd() throws {
        guard EjabberdCluster.isInstalled else {
            // CI sets CARKEY_REQUIRE_ARTIFACTS=1: there a missing ejabberd is an error, not a skip.
            if let required = getenv("CARKEY_REQUIRE_ARTIFACTS"), String(cString: required) == "1" {
                throw EjabberdCluster.Failure.notInstalled("required by CARKEY_REQUIRE_ARTIFACTS=1")
            }
            throw XCTSkip("ejabberd not installed (or not root): apt-get install ejabberd")
        }
    }

    /// The class's single node, started on first use.
    private func node() throws -> EjabberdCluster {
        try Self.requireEjabberd()
        if let failure = Self.sharedFailure { throw failure }
        if let shared = Self.shared { return shared }
        do {
            let cluster = try EjabberdCluster(nodes: 1, sessionExpiry: "1 hour", aclRules: Self.rules)
            Self.shared = cluster
            let began = Monotonic.seconds()
            try cluster.start()
            print("ejabberd: single node up in \(String(format: "%.1f", Monotonic.seconds() - began)) s")
            return cluster
        } catch {
            Self.sharedFailure = error
            throw error
        }
    }

    override class func tearDown() {
        shared?.stop()
        shared = nil
        super.tearDown()
    }

    private func carTransport(_ broker: EjabberdCluster, vehicle: String) throws -> MosquittoTransport {
        let client = try broker.pki.clientCertificate(commonName: vehicle)
        let endpoint = try MQTTEndpoint(url: broker.nodes[0].tlsURL)
        return try MosquittoTransport(options: MQTTConnectOptions(endpoint: endpoint, clientID: vehicle, keepaliveSeconds: 5,
                                                                  tls: MQTTTLSFiles(caFile: broker.pki.caFile, certificateFile: client.certificate,
                                                                                    keyFile: client.key)))
    }

    private func makeLink(_ transport: MosquittoTransport, vehicle: String, outbox: MemoryOutbox) -> CloudLink {
        var birth: UInt64 = 0
        return CloudLink(settings: CloudLinkSettings(vehicleID: vehicle), transport: transport, outbox: outbox,
                         nextBirthSequence: { birth += 1; return birth }, unitRandom: { 0 },
                         backoff: ReconnectBackoff(baseMillis: 50, capMillis: 400))
    }

    private func run(_ link: CloudLink, _ client: TestBrokerClient?, seconds: Double = 15, until done: () -> Bool) -> [CloudLinkReport] {
        var reports: [CloudLinkReport] = []
        let deadline = Monotonic.seconds() + seconds
        while !done() && Monotonic.seconds() < deadline {
            reports += link.step(nowMillis: monotonicMillis(), serviceMillis: 10)
            client?.poll(millis: 5)
        }
        return reports
    }

    func testCarWithoutCredentialsIsRefusedOnThePlainListenerAndAcceptedWithItsCertificate() throws {
        let broker = try node()
        // No user name, no password, plain TCP: mod_mqtt has nothing to authenticate (0x87).
        let plain = try MosquittoTransport(options: MQTTConnectOptions(endpoint: MQTTEndpoint(url: broker.url), clientID: "VIN-OK"))
        try plain.connect()
        var events: [MQTTEvent] = []
        let deadline = Monotonic.seconds() + 10
        while Monotonic.seconds() < deadline && !events.contains(where: { if case .connectRefused = $0 { return true } else { return false } }) {
            events += plain.service(timeoutMillis: 50).events
        }
        XCTAssertTrue(events.contains(.connectRefused(reasonCode: 0x87)), "\(events)")

        // A certificate whose CN is another car's ID is refused too (mosquitto would accept it).
        let other = try broker.pki.clientCertificate(commonName: "VIN-OTHER")
        let impostor = try MosquittoTransport(options: MQTTConnectOptions(endpoint: MQTTEndpoint(url: broker.nodes[0].tlsURL), clientID: "VIN-OK",
                                                                          tls: MQTTTLSFiles(caFile: broker.pki.caFile, certificateFile: other.certificate,
                                                                                            keyFile: other.key)))
        try impostor.connect()
        events = []
        let later = Monotonic.seconds() + 10
        while Monotonic.seconds() < later && !events.contains(where: { if case .connectRefused = $0 { return true } else { return false } }) {
            events += impostor.service(timeoutMillis: 50).events
        }
        XCTAssertTrue(events.contains(.connectRefused(reasonCode: 0x87)), "CN must equal the client id: \(events)")

        // Its own certificate: accepted, and the 7-day session asked for is capped to 1 hour in CONNACK.
        let car = try carTransport(broker, vehicle: "VIN-OK")
        try car.connect()
        events = []
        let last = Monotonic.seconds() + 10
        while Monotonic.seconds() < last && !events.contains(where: { if case .connected = $0 { return true } else { return false } }) {
            events += car.service(timeoutMillis: 50).events
        }
        XCTAssertTrue(events.contains { if case .connected = $0 { return true } else { return false } }, "\(events)")
        XCTAssertTrue(events.contains(.sessionExpiry(seconds: 3600)), "ejabberd returns its cap in CONNACK: \(events)")
        car.disconnect()
    }

    func testLinkDeliversInOrderWithUserPropertiesAtQoS1And2() throws {
        let broker = try node()
        let subscriber = try TestBrokerClient(options: broker.backendOptions(clientID: "be-order-\(getpid())", sessionExpirySeconds: 0))
        try subscriber.subscribe("vehicles/VIN-OK/#", qos: .exactlyOnce)
        let outbox = MemoryOutbox()
        for i in 1...30 { outbox.enqueue(topic: "vehicles/VIN-OK/events", payload: "{\"seq\":\(i)}", qos: i % 2 == 0 ? 2 : 1, sequence: Int64(i)) }
        let link = makeLink(try carTransport(broker, vehicle: "VIN-OK"), vehicle: "VIN-OK", outbox: outbox)
        _ = run(link, subscriber) { subscriber.payloads(on: "vehicles/VIN-OK/events").count >= 30 && outbox.messages.isEmpty }
        XCTAssertEqual(subscriber.payloads(on: "vehicles/VIN-OK/events"), (1...30).map { "{\"seq\":\($0)}" })
        XCTAssertEqual(try outbox.depth(), 0, "every message acknowledged (QoS 1 PUBACK, QoS 2 PUBCOMP)")
        let first = subscriber.received.first { $0.topic == "vehicles/VIN-OK/events" }
        XCTAssertEqual(first?.userProperties.first { $0.name == "uuid" }?.value, "uuid-1")
        XCTAssertEqual(first?.userProperties.first { $0.name == "seq" }?.value, "1")
        XCTAssertEqual(subscriber.payloads(on: "vehicles/VIN-OK/status").first, #"{"state":"online","birth":1}"#)
        link.stop(clock: monotonicMillis)
    }

    func testRefusalByACLIs0x90AndKeepsTheMessageQueued() throws {
        let broker = try node()
        let outbox = MemoryOutbox()
        outbox.enqueue(topic: "vehicles/VIN-DENIED/events", payload: "denied")
        outbox.enqueue(topic: "vehicles/VIN-DENIED/state", payload: "allowed")
        let link = makeLink(try carTransport(broker, vehicle: "VIN-DENIED"), vehicle: "VIN-DENIED", outbox: outbox)
        let reports = run(link, nil) { outbox.refused.count == 1 && outbox.messages.count == 1 }
        XCTAssertEqual(outbox.messages.map(\.topic), ["vehicles/VIN-DENIED/events"], "the refused message stays, the allowed one is gone")
        XCTAssertEqual(outbox.refused[1], 0x90, "ejabberd: Topic Name invalid (mosquitto says 0x87)")
        XCTAssertTrue(reports.contains(.refused(outboxID: 1, topic: "vehicles/VIN-DENIED/events", reasonCode: 0x90)), "\(reports)")
        link.stop(clock: monotonicMillis)
    }

    func testSubscribeOutsideItsOwnTopicsIsRefusedWith0x8F() throws {
        let broker = try node()
        let client = try broker.pki.clientCertificate(commonName: "VIN-OK")
        let car = try TestBrokerClient(options: MQTTConnectOptions(endpoint: MQTTEndpoint(url: broker.nodes[0].tlsURL), clientID: "VIN-OK",
                                                                   sessionExpirySeconds: 0,
                                                                   tls: MQTTTLSFiles(caFile: broker.pki.caFile, certificateFile: client.certificate,
                                                                                     keyFile: client.key)))
        try car.subscribe("vehicles/VIN-OTHER/commands", qos: .atLeastOnce)
        try car.subscribe("vehicles/VIN-OK/commands", qos: .atLeastOnce)
        XCTAssertTrue(car.wait(seconds: 5) { car.subscriptionCodes.count == 2 })
        XCTAssertEqual(car.subscriptionCodes["vehicles/VIN-OTHER/commands"], 0x8F)
        XCTAssertEqual(car.subscriptionCodes["vehicles/VIN-OK/commands"], 1)
    }

    /// The 2-node cluster: a message published on node A reaches a subscriber on node B (QoS 1
    /// and 2, user properties kept); node A killed with SIGKILL and restarted rejoins and routes again.
    func testTwoNodeClusterRoutesAcrossNodesAndANodeRejoinsAfterKill9() throws {
        try Self.requireEjabberd()
        let cluster = try EjabberdCluster(nodes: 2, aclRules: .perClientID())
        defer { cluster.stop() }
        let began = Monotonic.seconds()
        try cluster.start()
        print("ejabberd: 2-node cluster up and joined in \(String(format: "%.1f", Monotonic.seconds() - began)) s")
        let (a, b) = (cluster.nodes[0], cluster.nodes[1])
        XCTAssertNotNil(a.osPID)
        XCTAssertNotNil(b.osPID)
        print("ejabberd: RSS node A \(a.rssKB() ?? -1) KiB, node B \(b.rssKB() ?? -1) KiB")

        let onB = try TestBrokerClient(options: cluster.backendOptions(clientID: "be-on-b", sessionExpirySeconds: 0, node: 1))
        try onB.subscribe("vehicles/+/events", qos: .exactlyOnce)
        let onA = try TestBrokerClient(options: cluster.backendOptions(clientID: "be-on-a", sessionExpirySeconds: 0, node: 0))
        try onA.publish("vehicles/V1/events", "q1", qos: .atLeastOnce, userProperties: [MQTTUserProperty("uuid", "u-1")])
        try onA.publish("vehicles/V1/events", "q2", qos: .exactlyOnce, userProperties: [MQTTUserProperty("uuid", "u-2")])
        XCTAssertTrue(onB.wait(seconds: 10) { onB.received.count >= 2 }, "cross-node routing: \(onB.received)")
        XCTAssertEqual(onB.payloads(on: "vehicles/V1/events"), ["q1", "q2"])
        XCTAssertEqual(onB.received.map { $0.userProperties.first { $0.name == "uuid" }?.value }, ["u-1", "u-2"])

        let killedPID = a.osPID
        a.kill9()
        XCTAssertNil(a.osPID)
        if let killedPID { XCTAssertNotEqual(kill(killedPID, 0), 0, "the VM is gone") }
        let restarting = Monotonic.seconds()
        try a.restart()
        print("ejabberd: node A back and rejoined in \(String(format: "%.1f", Monotonic.seconds() - restarting)) s")
        let again = try TestBrokerClient(options: cluster.backendOptions(clientID: "be-on-a2", sessionExpirySeconds: 0, node: 0))
        try again.publish("vehicles/V1/events", "after-restart", qos: .atLeastOnce)
        XCTAssertTrue(onB.wait(seconds: 10) { onB.payloads(on: "vehicles/V1/events").contains("after-restart") },
                      "routing works again after the node came back: \(onB.payloads(on: "vehicles/V1/events"))")

        cluster.stop()
        XCTAssertNil(a.osPID)
        XCTAssertNil(b.osPID)
        XCTAssertEqual(Glibc.access(cluster.folder, F_OK), -1, "the run folder is removed")
        XCTAssertFalse(MosquittoBroker.canConnect(port: cluster.epmdPort), "the private epmd is gone")
    }
}

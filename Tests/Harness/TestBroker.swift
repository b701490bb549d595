// What a broker-agnostic cloud test needs from a broker, so one scenario runs against
// mosquitto and against ejabberd: how the car (carkey-agent) and a back-end client connect,
// and the reason codes each broker uses for an ACL refusal.
import Drivers
#if canImport(Glibc)
import Glibc
#endif

public protocol TestBroker: AnyObject {
    /// "mosquitto" or "ejabberd", for messages.
    var brokerName: String { get }
    /// The plain listener, mqtt://127.0.0.1:PORT.
    var url: String { get }
    /// mosquitto_pub/mosquitto_sub flags that connect a back-end client allowed on every topic
    /// (host, port, and credentials or TLS files).
    var backendCLIArguments: [String] { get }
    /// Options for an in-process back-end client (MosquittoTransport) allowed on every topic.
    func backendOptions(clientID: String, sessionExpirySeconds: UInt32) -> MQTTConnectOptions
    /// carkey-agent flags that connect the car `vehicleID` (its client id) to this broker.
    /// ejabberd: mqtts:// with a client certificate whose CN is the vehicle ID, because
    /// mod_mqtt refuses a client with neither user name nor password on a plain listener.
    func agentArguments(vehicleID: String) throws -> [String]
    /// PUBACK/PUBREC reason code for a publish the ACL refuses: mosquitto 0x87, ejabberd 0x90.
    var publishRefusedReasonCode: Int32 { get }
    /// SUBACK code for a subscription the ACL refuses: ejabberd 0x8F; nil for mosquitto, which
    /// grants it and filters on delivery.
    var subscribeRefusedReasonCode: Int32? { get }
}

extension EjabberdCluster: TestBroker {
    public var brokerName: String { "ejabberd" }
    /// Node 0's plain listener.
    public var url: String { nodes[0].url }

    public var backendCLIArguments: [String] {
        ["-h", "127.0.0.1", "-p", String(nodes[0].mqttPort), "-u", backendUser, "-P", backendPassword]
    }

    public func backendOptions(clientID: String, sessionExpirySeconds: UInt32) -> MQTTConnectOptions {
        backendOptions(clientID: clientID, sessionExpirySeconds: sessionExpirySeconds, node: 0)
    }

    /// The same on node `node` of the cluster.
    public func backendOptions(clientID: String, sessionExpirySeconds: UInt32, node: Int) -> MQTTConnectOptions {
        MQTTConnectOptions(endpoint: MQTTEndpoint(host: "127.0.0.1", port: nodes[node].mqttPort, usesTLS: false), clientID: clientID,
                           keepaliveSeconds: 10, sessionExpirySeconds: sessionExpirySeconds,
                           username: backendUser, password: backendPassword)
    }

    public func agentArguments(vehicleID: String) throws -> [String] {
        try agentArguments(vehicleID: vehicleID, nodes: [0])
    }

    /// Agent flags for the listed nodes' TLS listeners (several `--mqtt` for failover).
    public func agentArguments(vehicleID: String, nodes indexes: [Int]) throws -> [String] {
        let client = try pki.clientCertificate(commonName: vehicleID)
        return indexes.flatMap { ["--mqtt", nodes[$0].tlsURL] }
            + ["--mqtt-ca", pki.caFile, "--mqtt-cert", client.certificate, "--mqtt-key", client.key]
    }

    public var publishRefusedReasonCode: Int32 { 0x90 }
    public var subscribeRefusedReasonCode: Int32? { 0x8F }
}

/// A back-end MQTT v5 client for broker-agnostic tests, serviced by the test thread inside its
/// waits (so nothing races: the transport is only touched here).
public final class TestBrokerClient {
    public let transport: MosquittoTransport
    public private(set) var received: [MQTTInbound] = []
    /// Session-present of the last CONNACK; nil before one arrived.
    public private(set) var sessionPresent: Bool?
    public private(set) var refusedConnect: Int32?
    /// PUBACK/PUBCOMP reason codes by message id.
    public private(set) var acknowledged: [Int32: Int32] = [:]
    /// SUBACK reason codes by topic filter (>= 0x80: refused).
    public private(set) var subscriptionCodes: [String: Int32] = [:]
    /// The Session Expiry Interval the broker put in its last CONNACK (a cap), if any.
    public private(set) var grantedSessionExpiry: UInt32?
    private var filters: [(String, MQTTQoS)] = []

    /// Connects (waits for the CONNACK, at most 10 s).
    public init(options: MQTTConnectOptions) throws {
        transport = try MosquittoTransport(options: options)
        try transport.connect()
        guard wait(seconds: 10, until: { self.sessionPresent != nil || self.refusedConnect != nil }), refusedConnect == nil else {
            throw refusedConnect.map { MQTTError.connectionRefused(reasonCode: $0) } ?? .notConnected(clientID: options.clientID)
        }
    }

    deinit { transport.disconnect() }

    /// Subscribes and waits for the SUBACK (at most 10 s); its code lands in `subscriptionCodes`.
    public func subscribe(_ filter: String, qos: MQTTQoS = .exactlyOnce) throws(MQTTError) {
        filters.append((filter, qos))
        subscriptionCodes[filter] = nil
        try transport.subscribe(filter, qos: qos)
        _ = wait(seconds: 10) { self.subscriptionCodes[filter] != nil }
    }

    /// Publishes and, for QoS 1 and 2, services the connection until the PUBACK/PUBCOMP (at
    /// most 10 s): mosquitto hands a QoS 2 message on only at PUBREL, which we send from here.
    /// Returns the reason code (nil: QoS 0, or no acknowledgement in time).
    @discardableResult
    public func publish(_ topic: String, _ payload: String, qos: MQTTQoS = .atLeastOnce, retain: Bool = false,
                        userProperties: [MQTTUserProperty] = []) throws -> Int32? {
        let id = try transport.publish(MQTTPublish(topic: topic, payload: Array(payload.utf8), qos: qos, retain: retain,
                                                   userProperties: userProperties))
        guard qos > .atMostOnce else {
            poll(millis: 20)
            return nil
        }
        _ = wait(seconds: 10) { self.acknowledged[id] != nil }
        return acknowledged[id]
    }

    /// One service pass; reconnects (and resubscribes when the session is new) after a loss.
    public func poll(millis: Int32 = 20) {
        let (events, error) = transport.service(timeoutMillis: millis)
        for event in events {
            switch event {
            case .message(let message): received.append(message)
            case .connected(let present):
                sessionPresent = present
                if !present { for (filter, qos) in filters { try? transport.subscribe(filter, qos: qos) } }
            case .connectRefused(let code): refusedConnect = code
            case .published(let id, let code): acknowledged[id] = code
            case .subscribed(let filter, let code): subscriptionCodes[filter] = code
            case .sessionExpiry(let seconds): grantedSessionExpiry = seconds
            default: break
            }
        }
        if error != nil {
            usleep(200_000)
            try? transport.connect()
        }
    }

    /// Services the connection until `condition` holds or `seconds` pass.
    public func wait(seconds: Double, until condition: () -> Bool) -> Bool {
        let deadline = Monotonic.seconds() + seconds
        while Monotonic.seconds() < deadline {
            if condition() { return true }
            poll()
        }
        return condition()
    }

    /// Payloads received on `topic`, as text, in arrival order.
    public func payloads(on topic: String) -> [String] {
        received.filter { $0.topic == topic }.map { String(decoding: $0.payload, as: UTF8.self) }
    }
}

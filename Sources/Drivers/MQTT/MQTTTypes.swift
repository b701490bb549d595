// Values exchanged between the cloud link and an MQTT transport (real or simulated).

/// One message to publish. User properties ride along as MQTT v5 user properties.
public struct MQTTPublish: Sendable, Equatable {
    public var topic: String
    public var payload: [UInt8]
    public var qos: MQTTQoS
    public var retain: Bool
    public var userProperties: [MQTTUserProperty]
    /// v5 message expiry interval in seconds; nil = never expires.
    public var messageExpirySeconds: UInt32?

    public init(topic: String, payload: [UInt8], qos: MQTTQoS, retain: Bool = false,
                userProperties: [MQTTUserProperty] = [], messageExpirySeconds: UInt32? = nil) {
        self.topic = topic
        self.payload = payload
        self.qos = qos
        self.retain = retain
        self.userProperties = userProperties
        self.messageExpirySeconds = messageExpirySeconds
    }
}

public struct MQTTUserProperty: Sendable, Equatable {
    public var name: String
    public var value: String
    public init(_ name: String, _ value: String) {
        self.name = name
        self.value = value
    }
}

/// A message received on a subscription.
public struct MQTTInbound: Sendable, Equatable {
    public var topic: String
    public var payload: [UInt8]
    public var userProperties: [MQTTUserProperty]
    public init(topic: String, payload: [UInt8], userProperties: [MQTTUserProperty] = []) {
        self.topic = topic
        self.payload = payload
        self.userProperties = userProperties
    }
}

/// What the transport reports from one service pass.
public enum MQTTEvent: Sendable, Equatable {
    /// CONNACK with reason 0.
    case connected(sessionPresent: Bool)
    /// CONNACK with a refusal (v5 reason code), e.g. 0x87 not authorized.
    case connectRefused(reasonCode: Int32)
    /// The CONNACK carried a Session Expiry Interval: the broker keeps the session this long,
    /// whatever the client asked. Reported just before `.connected`; absent when the broker
    /// accepted what was asked without saying so.
    case sessionExpiry(seconds: UInt32)
    /// SUBACK for one SUBSCRIBE of `topicFilter`: v5 reason code 0-2 (the QoS granted) or a
    /// refusal (>= 0x80, e.g. ejabberd's 0x8F for a filter its ACL denies).
    case subscribed(topicFilter: String, reasonCode: Int32)
    /// The connection ended; `reasonCode` 0 is a clean disconnect we asked for.
    case disconnected(reasonCode: Int32)
    /// PUBACK/PUBCOMP for `messageID`. A v5 reason code >= 0x80 means the broker refused it.
    case published(messageID: Int32, reasonCode: Int32)
    case message(MQTTInbound)
}

/// The Last Will: published by the broker when the connection dies without a clean DISCONNECT.
public struct MQTTWill: Sendable, Equatable {
    public var topic: String
    public var payload: [UInt8]
    public var qos: MQTTQoS
    public var retain: Bool
    /// v5 will delay interval: short network blips within it do not publish the will.
    public var delaySeconds: UInt32
    public init(topic: String, payload: [UInt8], qos: MQTTQoS = .atLeastOnce, retain: Bool = true, delaySeconds: UInt32 = 10) {
        self.topic = topic
        self.payload = payload
        self.qos = qos
        self.retain = retain
        self.delaySeconds = delaySeconds
    }
}

/// A broker connection. Every call happens on the one thread that owns the transport, which
/// is also where `service` delivers events: libmosquitto's own loop thread is never used.
public protocol MQTTTransport: AnyObject {
    /// Sets the will for the next connect.
    func setWill(_ will: MQTTWill) throws(MQTTError)
    /// One connection attempt (DNS, TCP, TLS, CONNECT). The CONNACK arrives through `service`.
    func connect() throws(MQTTError)
    /// Moves bytes for up to `timeoutMillis` and returns what happened. A non-nil error means
    /// the connection is gone and the caller should back off and reconnect.
    func service(timeoutMillis: Int32) -> (events: [MQTTEvent], error: MQTTError?)
    /// Queues a publish and returns its message ID.
    func publish(_ message: MQTTPublish) throws(MQTTError) -> Int32
    func subscribe(_ topicFilter: String, qos: MQTTQoS) throws(MQTTError)
    /// A clean DISCONNECT (the broker discards the will).
    func disconnect()

    // Readiness-driven use (CloudService): the owner polls the socket and calls back.

    /// The connection's socket while there is one: poll it for `.readable`, and `.writable`
    /// too while `wantsWrite`.
    var socketDescriptor: FileDescriptor? { get }
    /// True while bytes are queued for the socket (a publish, an acknowledgement, a ping).
    var wantsWrite: Bool { get }
    /// Never blocks: reads if `readable`, writes if `writable`, and runs the keepalive
    /// housekeeping when it is due; reports like `service(timeoutMillis:)`.
    func service(readable: Bool, writable: Bool, nowMillis: UInt64) -> (events: [MQTTEvent], error: MQTTError?)
    /// When the keepalive housekeeping (a ping, or giving up on a missing ping response) is
    /// next due, in monotonic milliseconds; nil without a connection.
    func nextHousekeepingMillis() -> UInt64?
}

/// Transports without a socket of their own (scripted ones in tests) are serviced with a zero
/// timeout whenever their owner looks.
extension MQTTTransport {
    public var socketDescriptor: FileDescriptor? { nil }
    public var wantsWrite: Bool { false }
    public func service(readable: Bool, writable: Bool, nowMillis: UInt64) -> (events: [MQTTEvent], error: MQTTError?) {
        service(timeoutMillis: 0)
    }
    public func nextHousekeepingMillis() -> UInt64? { nil }
}

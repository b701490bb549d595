// The real MQTT transport: libmosquitto with MQTT v5, driven by our own loop.
//
// Why not mosquitto_loop_start: in 2.0.11 its thread returns for good on DNS, TLS and
// protocol errors, so a car would go silent until rebooted. Here the owner calls `service`
// on its own thread and decides about reconnecting (see CloudLink).
//
// CloudService drives it by readiness: it polls `socketDescriptor` (writable only while
// `wantsWrite`) and calls `service(readable:writable:nowMillis:)`, which runs
// mosquitto_loop_read/write and, only when the keepalive is due, mosquitto_loop_misc. The
// keepalive deadline is tracked here from when we last read and wrote, mirroring libmosquitto's
// own rule (ping when nothing went out or came in for the keepalive interval), so an idle link
// wakes about twice per keepalive interval (ping out, response in) instead of every 50 ms.
import CMosquitto
#if canImport(Glibc)
import Glibc
#endif

/// TLS material for mqtts:// (TLS 1.2 minimum, peer verification on).
public struct MQTTTLSFiles: Sendable, Equatable {
    public var caFile: String
    public var certificateFile: String?
    public var keyFile: String?
    public init(caFile: String, certificateFile: String? = nil, keyFile: String? = nil) {
        self.caFile = caFile
        self.certificateFile = certificateFile
        self.keyFile = keyFile
    }
}

public struct MQTTConnectOptions: Sendable, Equatable {
    public var endpoint: MQTTEndpoint
    public var clientID: String
    public var keepaliveSeconds: Int32
    /// v5 session expiry: the broker keeps our subscriptions and queued QoS 1/2 messages this
    /// long after a disconnect (clean start is off).
    public var sessionExpirySeconds: UInt32
    public var tls: MQTTTLSFiles?
    public var username: String?
    public var password: String?
    /// QoS 1/2 messages in flight at once. TCP and libmosquitto's in-order resend keep first
    /// arrivals in order per topic; after a reconnect, duplicates may follow (the cloud
    /// de-duplicates by UUID).
    public var sendMaximum: Int32

    /// A week: a car parked over a holiday still finds the commands queued for it. A broker may
    /// grant less (ejabberd's default cap is 5 minutes); the CONNACK then says so.
    public static let defaultSessionExpirySeconds: UInt32 = 7 * 24 * 3600

    public init(endpoint: MQTTEndpoint, clientID: String, keepaliveSeconds: Int32 = 30,
                sessionExpirySeconds: UInt32 = MQTTConnectOptions.defaultSessionExpirySeconds, tls: MQTTTLSFiles? = nil,
                username: String? = nil, password: String? = nil, sendMaximum: Int32 = 32) {
        self.sendMaximum = sendMaximum
        self.endpoint = endpoint
        self.clientID = clientID
        self.keepaliveSeconds = keepaliveSeconds
        self.sessionExpirySeconds = sessionExpirySeconds
        self.tls = tls
        self.username = username
        self.password = password
    }
}

/// libmosquitto wants mosquitto_lib_init once per process before anything else.
private let libraryReady: Bool = {
    mosquitto_lib_init()
    return true
}()

public final class MosquittoTransport: MQTTTransport {
    private let handle: OpaquePointer
    private let options: MQTTConnectOptions
    /// Filled by the C callbacks during mosquitto_loop, drained by `service`.
    fileprivate var pending: [MQTTEvent] = []
    /// SUBSCRIBE message ID -> topic filter, until its SUBACK names the outcome.
    fileprivate var subscriptions: [Int32: String] = [:]
    private var everConnected = false
    /// Monotonic milliseconds of our last read, last write and last housekeeping call.
    private var lastReadMillis: UInt64 = 0
    private var lastWriteMillis: UInt64 = 0
    private var lastHousekeepingMillis: UInt64 = 0

    public init(options: MQTTConnectOptions) throws(MQTTError) {
        precondition(libraryReady)
        self.options = options
        // clean_session=false: with v5 this is Clean Start 0, so a reconnect resumes the session.
        guard let handle = mosquitto_new(options.clientID, false, nil) else {
            throw .library(operation: "mosquitto_new", code: MOSQ_ERR_NOMEM.rawValue, message: Self.describe(MOSQ_ERR_NOMEM.rawValue))
        }
        self.handle = handle
        mosquitto_user_data_set(handle, Unmanaged.passUnretained(self).toOpaque())
        try check(mosquitto_int_option(handle, MOSQ_OPT_PROTOCOL_VERSION, MQTT_PROTOCOL_V5), "protocol version")
        try check(mosquitto_int_option(handle, MOSQ_OPT_SEND_MAXIMUM, options.sendMaximum), "send maximum")
        // Small packets (PUBLISH, PUBACK) must not wait for Nagle's algorithm.
        try check(mosquitto_int_option(handle, MOSQ_OPT_TCP_NODELAY, 1), "TCP_NODELAY")
        try check(mosquitto_threaded_set(handle, true), "threaded")
        if let username = options.username {
            try check(mosquitto_username_pw_set(handle, username, options.password), "credentials")
        }
        if let tls = options.tls {
            try checkTLS(mosquitto_tls_set(handle, tls.caFile, nil, tls.certificateFile, tls.keyFile, nil), "TLS files")
            // cert_reqs 1 = SSL_VERIFY_PEER; "tlsv1.2" disables TLS 1.0 and 1.1.
            try checkTLS(mosquitto_tls_opts_set(handle, 1, "tlsv1.2", nil), "TLS options")
        }
        mosquitto_connect_v5_callback_set(handle, onConnect)
        mosquitto_disconnect_v5_callback_set(handle, onDisconnect)
        mosquitto_publish_v5_callback_set(handle, onPublish)
        mosquitto_message_v5_callback_set(handle, onMessage)
        mosquitto_subscribe_v5_callback_set(handle, onSubscribe)
    }

    deinit { mosquitto_destroy(handle) }

    public func setWill(_ will: MQTTWill) throws(MQTTError) {
        var properties: OpaquePointer? = nil
        try check(mosquitto_property_add_int32(&properties, Int32(MQTT_PROP_WILL_DELAY_INTERVAL.rawValue), will.delaySeconds), "will delay")
        let rc = will.payload.withUnsafeBytes { payload in
            mosquitto_will_set_v5(handle, will.topic, Int32(will.payload.count), payload.baseAddress, will.qos.int32, will.retain, properties)
        }
        // On success libmosquitto owns the property list; on failure it is still ours.
        if rc != MOSQ_ERR_SUCCESS.rawValue { mosquitto_property_free_all(&properties) }
        try check(rc, "will")
    }

    public func connect() throws(MQTTError) {
        var properties: OpaquePointer? = nil
        defer { mosquitto_property_free_all(&properties) }
        try check(mosquitto_property_add_int32(&properties, Int32(MQTT_PROP_SESSION_EXPIRY_INTERVAL.rawValue), options.sessionExpirySeconds), "session expiry")
        let rc: Int32
        if everConnected {
            rc = mosquitto_reconnect(handle)
        } else {
            rc = mosquitto_connect_bind_v5(handle, options.endpoint.host, options.endpoint.port, options.keepaliveSeconds, nil, properties)
            if rc == MOSQ_ERR_SUCCESS.rawValue { everConnected = true }
        }
        try check(rc, "connect to \(options.endpoint)")
        // libmosquitto starts its keepalive clock at connect.
        let now = monotonicNow()
        (lastReadMillis, lastWriteMillis, lastHousekeepingMillis) = (now, now, now)
    }

    public var socketDescriptor: FileDescriptor? {
        let fd = mosquitto_socket(handle)
        return fd >= 0 ? FileDescriptor(rawValue: fd) : nil
    }

    public var wantsWrite: Bool { mosquitto_want_write(handle) }

    public func service(readable: Bool, writable: Bool, nowMillis now: UInt64) -> (events: [MQTTEvent], error: MQTTError?) {
        var rc = MOSQ_ERR_SUCCESS.rawValue
        if readable {
            // Reads as many packets as libmosquitto has QoS messages outstanding (2.0.11), and
            // carries on a TLS handshake in progress.
            rc = mosquitto_loop_read(handle, 1)
            lastReadMillis = now
        }
        if rc == MOSQ_ERR_SUCCESS.rawValue, writable, mosquitto_socket(handle) >= 0 {
            rc = mosquitto_loop_write(handle, 1)
            lastWriteMillis = now
        }
        if rc == MOSQ_ERR_SUCCESS.rawValue, let due = nextHousekeepingMillis(), now >= due {
            let quiet = !mosquitto_want_write(handle)
            rc = mosquitto_loop_misc(handle)
            lastHousekeepingMillis = now
            // A ping was queued: libmosquitto restarts its "nothing came in" clock here, so
            // the next check is one keepalive later (when a missing response means a dead link).
            if quiet && mosquitto_want_write(handle) { lastReadMillis = now }
        }
        let events = pending
        pending.removeAll()
        if rc == MOSQ_ERR_SUCCESS.rawValue { return (events, nil) }
        return (events, .library(operation: "", code: rc, message: Self.describe(rc)))
    }

    public func nextHousekeepingMillis() -> UInt64? {
        guard mosquitto_socket(handle) >= 0, options.keepaliveSeconds > 0 else { return nil }
        let keepalive = UInt64(options.keepaliveSeconds) * 1000
        // At most once a second: libmosquitto counts whole seconds, so a check that finds
        // nothing due yet is repeated a second later rather than at once.
        return max(min(lastReadMillis, lastWriteMillis) + keepalive, lastHousekeepingMillis + 1000)
    }

    public func service(timeoutMillis: Int32) -> (events: [MQTTEvent], error: MQTTError?) {
        let rc = mosquitto_loop(handle, timeoutMillis, 1)
        let events = pending
        pending.removeAll()
        if rc == MOSQ_ERR_SUCCESS.rawValue { return (events, nil) }
        return (events, .library(operation: "", code: rc, message: Self.describe(rc)))
    }

    public func publish(_ message: MQTTPublish) throws(MQTTError) -> Int32 {
        var properties: OpaquePointer? = nil
        defer { mosquitto_property_free_all(&properties) }
        for property in message.userProperties {
            try check(mosquitto_property_add_string_pair(&properties, Int32(MQTT_PROP_USER_PROPERTY.rawValue), property.name, property.value), "user property")
        }
        if let expiry = message.messageExpirySeconds {
            try check(mosquitto_property_add_int32(&properties, Int32(MQTT_PROP_MESSAGE_EXPIRY_INTERVAL.rawValue), expiry), "message expiry")
        }
        var messageID: Int32 = 0
        let rc = message.payload.withUnsafeBytes { payload in
            mosquitto_publish_v5(handle, &messageID, message.topic, Int32(message.payload.count), payload.baseAddress,
                                 message.qos.int32, message.retain, properties)
        }
        // NO_CONN with QoS > 0 means "queued, will be sent on reconnect" in 2.0.11; we never
        // publish while disconnected, so treat every non-success as a refusal.
        try check(rc, "publish")
        return messageID
    }

    public func subscribe(_ topicFilter: String, qos: MQTTQoS) throws(MQTTError) {
        var messageID: Int32 = 0
        try check(mosquitto_subscribe_v5(handle, &messageID, topicFilter, qos.int32, 0, nil), "subscribe \(topicFilter)")
        // Bounded: a SUBACK that never comes (the connection dropped) leaves its entry behind.
        if subscriptions.count >= 64 { subscriptions.removeAll() }
        subscriptions[messageID] = topicFilter
    }

    public func disconnect() {
        _ = mosquitto_disconnect_v5(handle, 0, nil)
        // Let the DISCONNECT packet leave before the socket closes.
        _ = mosquitto_loop(handle, 100, 1)
    }

    private func check(_ rc: Int32, _ what: String) throws(MQTTError) {
        guard rc == MOSQ_ERR_SUCCESS.rawValue else { throw .library(operation: what, code: rc, message: Self.describe(rc)) }
    }

    private func checkTLS(_ rc: Int32, _ what: String) throws(MQTTError) {
        guard rc == MOSQ_ERR_SUCCESS.rawValue else { throw .tlsSetup(operation: what, code: rc, message: Self.describe(rc)) }
    }

    static func describe(_ rc: Int32) -> String {
        if rc == MOSQ_ERR_ERRNO.rawValue { return String(cString: strerror(errno)) }
        return String(cString: mosquitto_strerror(rc))
    }

    fileprivate static func from(_ userdata: UnsafeMutableRawPointer?) -> MosquittoTransport? {
        guard let userdata else { return nil }
        return Unmanaged<MosquittoTransport>.fromOpaque(userdata).takeUnretainedValue()
    }
}

// The C callbacks run inside mosquitto_loop on the owner's thread; they only queue events.

private let onConnect: @convention(c) (OpaquePointer?, UnsafeMutableRawPointer?, Int32, Int32, OpaquePointer?) -> Void = { _, userdata, rc, flags, properties in
    guard let transport = MosquittoTransport.from(userdata) else { return }
    if rc == 0 {
        // The CONNACK's properties: a Session Expiry Interval here overrides what we asked.
        var expiry: UInt32 = 0
        if mosquitto_property_read_int32(properties, Int32(MQTT_PROP_SESSION_EXPIRY_INTERVAL.rawValue), &expiry, false) != nil {
            transport.pending.append(.sessionExpiry(seconds: expiry))
        }
        transport.pending.append(.connected(sessionPresent: flags & 1 == 1))
    } else {
        transport.pending.append(.connectRefused(reasonCode: rc))
    }
}

private let onDisconnect: @convention(c) (OpaquePointer?, UnsafeMutableRawPointer?, Int32, OpaquePointer?) -> Void = { _, userdata, rc, _ in
    MosquittoTransport.from(userdata)?.pending.append(.disconnected(reasonCode: rc))
}

private let onPublish: @convention(c) (OpaquePointer?, UnsafeMutableRawPointer?, Int32, Int32, OpaquePointer?) -> Void = { _, userdata, mid, reason, _ in
    MosquittoTransport.from(userdata)?.pending.append(.published(messageID: mid, reasonCode: reason))
}

/// One filter per SUBSCRIBE, so one granted value; in v5 it is the SUBACK's reason code.
private let onSubscribe: @convention(c) (OpaquePointer?, UnsafeMutableRawPointer?, Int32, Int32, UnsafePointer<Int32>?, OpaquePointer?) -> Void = { _, userdata, mid, count, granted, _ in
    guard let transport = MosquittoTransport.from(userdata), let filter = transport.subscriptions.removeValue(forKey: mid) else { return }
    guard count >= 1, let granted else { return }
    transport.pending.append(.subscribed(topicFilter: filter, reasonCode: granted[0]))
}

private let onMessage: @convention(c) (OpaquePointer?, UnsafeMutableRawPointer?, UnsafePointer<mosquitto_message>?, OpaquePointer?) -> Void = { _, userdata, message, properties in
    guard let transport = MosquittoTransport.from(userdata), let message = message?.pointee, let topic = message.topic else { return }
    let length = Int(max(0, message.payloadlen))
    let payload: [UInt8] = message.payload.map { Array(UnsafeRawBufferPointer(start: $0, count: length)) } ?? []
    transport.pending.append(.message(MQTTInbound(topic: String(cString: topic), payload: payload,
                                                  userProperties: readUserProperties(properties))))
}

private func readUserProperties(_ list: OpaquePointer?) -> [MQTTUserProperty] {
    var out: [MQTTUserProperty] = []
    var cursor = list
    var skipFirst = false
    while out.count < 32 {
        var name: UnsafeMutablePointer<CChar>? = nil
        var value: UnsafeMutablePointer<CChar>? = nil
        guard let found = mosquitto_property_read_string_pair(cursor, Int32(MQTT_PROP_USER_PROPERTY.rawValue), &name, &value, skipFirst) else { break }
        if let name, let value { out.append(MQTTUserProperty(String(cString: name), String(cString: value))) }
        free(name)
        free(value)
        cursor = found
        skipFirst = true
    }
    return out
}

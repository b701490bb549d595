// Everything the MQTT layer throws, typed: libmosquitto failures (with the MOSQ_ERR_* name, so
// a log line can be searched for), TLS set-up, broker refusals and bad endpoint URLs.
// Messages carry codes, topics and host names, never payloads or credentials.

public enum MQTTError: Error, Equatable, Sendable, CustomStringConvertible {
    /// A libmosquitto call returned `code` (a MOSQ_ERR_* value) while doing `operation`
    /// ("" for the connection's own loop); `message` is libmosquitto's (or errno's) text.
    case library(operation: String, code: Int32, message: String)
    /// Loading the CA, certificate or key, or setting the TLS options, failed.
    case tlsSetup(operation: String, code: Int32, message: String)
    /// The broker answered CONNECT with a refusal (a v5 reason code >= 0x80, see MQTTReasonCode).
    case connectionRefused(reasonCode: Int32)
    /// No CONNACK came within the wait (a client that waits for one, e.g. test and tool clients).
    case notConnected(clientID: String)
    /// An mqtt:// or mqtts:// URL that cannot be used; the URL itself is not quoted.
    case badEndpoint(MQTTEndpoint.ParseError)

    /// libmosquitto's code, when the error comes from a libmosquitto call.
    public var mosquittoCode: Int32? {
        switch self {
        case .library(_, let code, _), .tlsSetup(_, let code, _): return code
        case .connectionRefused, .notConnected, .badEndpoint: return nil
        }
    }

    public var description: String {
        switch self {
        case .library(let operation, let code, let message):
            return "MQTT error \(code) (\(Self.mosquittoName(code))): " + (operation.isEmpty ? message : "\(operation): \(message)")
        case .tlsSetup(let operation, let code, let message):
            return "MQTT TLS set-up failed (\(Self.mosquittoName(code))): \(operation): \(message)"
        case .connectionRefused(let reasonCode):
            return "broker refused the connection (reason \(MQTTReasonCode.describe(reasonCode)))"
        case .notConnected(let clientID):
            return "MQTT client \(clientID) got no CONNACK"
        case .badEndpoint(let problem):
            return problem.description
        }
    }

    /// The MOSQ_ERR_* name of a libmosquitto 2.0 return code (mosquitto.h), or "MOSQ_ERR <n>".
    public static func mosquittoName(_ code: Int32) -> String {
        mosquittoNames[code].map { "MOSQ_ERR_" + $0 } ?? "MOSQ_ERR \(code)"
    }

    private static let mosquittoNames: [Int32: String] = [
        -4: "AUTH_CONTINUE", -3: "NO_SUBSCRIBERS", -2: "SUB_EXISTS", -1: "CONN_PENDING", 0: "SUCCESS",
        1: "NOMEM", 2: "PROTOCOL", 3: "INVAL", 4: "NO_CONN", 5: "CONN_REFUSED", 6: "NOT_FOUND", 7: "CONN_LOST",
        8: "TLS", 9: "PAYLOAD_SIZE", 10: "NOT_SUPPORTED", 11: "AUTH", 12: "ACL_DENIED", 13: "UNKNOWN",
        14: "ERRNO", 15: "EAI", 16: "PROXY", 17: "PLUGIN_DEFER", 19: "KEEPALIVE", 20: "LOOKUP",
        21: "MALFORMED_PACKET", 22: "DUPLICATE_PROPERTY", 23: "TLS_HANDSHAKE", 24: "QOS_NOT_SUPPORTED",
        25: "OVERSIZE_PACKET", 26: "OCSP", 27: "TIMEOUT", 28: "RETAIN_NOT_SUPPORTED", 29: "TOPIC_ALIAS_INVALID",
        30: "ADMINISTRATIVE_ACTION", 31: "ALREADY_EXISTS",
    ]
}

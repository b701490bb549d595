// MQTT v5 reason codes (MQTT 5.0, section 2.4) by name, for logs and the outbox's last error.
//
// Brokers differ in which refusal they pick for the same thing: an ACL-denied PUBLISH is 0x87
// from mosquitto and 0x90 from ejabberd, an ACL-denied SUBSCRIBE is granted by mosquitto and
// answered 0x8F by ejabberd. So the agent never tests for one code: every code from 0x80 up
// is a refusal, and the name only helps the person reading the log.

public enum MQTTReasonCode {
    /// A v5 reason code of 0x80 or more refuses what was asked (CONNACK, PUBACK, PUBREC,
    /// PUBCOMP, SUBACK, UNSUBACK, DISCONNECT alike); below it is a success of some kind.
    public static func isRefusal(_ code: Int32) -> Bool { code >= 0x80 }

    /// The name the standard gives `code`, or nil for a value it does not define.
    public static func name(_ code: Int32) -> String? { names[code] }

    /// "0x90 Topic Name invalid": two lower-case hex digits, then the name if known.
    public static func describe(_ code: Int32) -> String {
        let hex = String(code, radix: 16)
        let text = "0x" + (hex.count < 2 ? "0" + hex : hex)
        return name(code).map { "\(text) \($0)" } ?? text
    }

    /// The codes a client can get back (CONNACK, PUBACK/PUBREC/PUBCOMP, SUBACK, UNSUBACK,
    /// DISCONNECT, AUTH), named after the standard's table.
    private static let names: [Int32: String] = [
        // Successes. 0x00 is also "Normal disconnection" and "Granted QoS 0".
        0x00: "Success",
        0x01: "Granted QoS 1",
        0x02: "Granted QoS 2",
        0x04: "Disconnect with Will Message",
        0x10: "No matching subscribers",
        0x11: "No subscription existed",
        0x18: "Continue authentication",
        0x19: "Re-authenticate",
        // Refusals.
        0x80: "Unspecified error",
        0x81: "Malformed Packet",
        0x82: "Protocol Error",
        0x83: "Implementation specific error",
        0x84: "Unsupported Protocol Version",
        0x85: "Client Identifier not valid",
        0x86: "Bad User Name or Password",
        0x87: "Not authorized",
        0x88: "Server unavailable",
        0x89: "Server busy",
        0x8A: "Banned",
        0x8B: "Server shutting down",
        0x8C: "Bad authentication method",
        0x8D: "Keep Alive timeout",
        0x8E: "Session taken over",
        0x8F: "Topic Filter invalid",
        0x90: "Topic Name invalid",
        0x91: "Packet Identifier in use",
        0x92: "Packet Identifier not found",
        0x93: "Receive Maximum exceeded",
        0x94: "Topic Alias invalid",
        0x95: "Packet too large",
        0x96: "Message rate too high",
        0x97: "Quota exceeded",
        0x98: "Administrative action",
        0x99: "Payload format invalid",
        0x9A: "Retain not supported",
        0x9B: "QoS not supported",
        0x9C: "Use another server",
        0x9D: "Server moved",
        0x9E: "Shared Subscriptions not supported",
        0x9F: "Connection rate exceeded",
        0xA0: "Maximum connect time",
        0xA1: "Subscription Identifiers not supported",
        0xA2: "Wildcard Subscriptions not supported",
    ]
}

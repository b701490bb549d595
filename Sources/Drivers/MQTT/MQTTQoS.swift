// The three MQTT delivery guarantees. Everything above the libmosquitto calls passes one of
// these cases (a QoS of 3 or -1 cannot be built); the Int32 libmosquitto wants is made at the call.

public enum MQTTQoS: UInt8, Sendable, CaseIterable, Comparable, CustomStringConvertible {
    /// Fire and forget: heartbeats, whose loss the next one repairs.
    case atMostOnce = 0
    /// PUBACK-confirmed, may arrive twice (the cloud de-duplicates by UUID): events, state.
    case atLeastOnce = 1
    /// PUBREC/PUBREL/PUBCOMP: exactly once, for command results.
    case exactlyOnce = 2

    /// What libmosquitto's C API takes.
    var int32: Int32 { Int32(rawValue) }

    public static func < (lhs: MQTTQoS, rhs: MQTTQoS) -> Bool { lhs.rawValue < rhs.rawValue }

    public var description: String { "QoS \(rawValue)" }
}

extension MQTTQoS {
    /// The outbox stores a QoS as a plain number (Storage names no MQTT type) and accepts only
    /// 0 to 2 on enqueue; a row edited to anything else is sent at least once rather than lost.
    public init(outbox value: Int32) {
        self = MQTTQoS(rawValue: UInt8(clamping: max(0, value))) ?? .atLeastOnce
    }
}

// Time is an input, never read inside the protocol: the caller passes one sample per event.

/// One reading of the host's clocks.
/// - `monotonicMillis` drives every lifetime, expiry and rate limit (it cannot be set back).
/// - `wallSeconds` (seconds since 1970) is only compared with key validity windows and phone
///   timestamps, and only when `wallClockTrusted` says the host believes it (issue 4 supplies
///   the trusted-time high-water mark; a Raspberry Pi boots with no real-time clock).
public struct ProtocolTime: Sendable, Equatable {
    public var monotonicMillis: UInt64
    public var wallSeconds: Int64
    public var wallClockTrusted: Bool

    public init(monotonicMillis: UInt64, wallSeconds: Int64, wallClockTrusted: Bool) {
        self.monotonicMillis = monotonicMillis
        self.wallSeconds = wallSeconds
        self.wallClockTrusted = wallClockTrusted
    }

    /// The same clocks `millis` later (tests and simulators).
    public func advanced(byMillis millis: UInt64) -> ProtocolTime {
        ProtocolTime(monotonicMillis: monotonicMillis + millis,
                     wallSeconds: wallSeconds + Int64(millis / 1000),
                     wallClockTrusted: wallClockTrusted)
    }

    /// Wall seconds clamped into the UInt32 fields of the wire format.
    var wallSeconds32: UInt32 { UInt32(clamping: max(0, wallSeconds)) }
}

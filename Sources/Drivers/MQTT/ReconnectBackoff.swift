// Reconnect delays 2, 4, 8, 16, 32, 60, 60, ... seconds plus jitter, reset on a good CONNACK.
// libmosquitto's own backoff is quadratic and unjittered (see docs/cloud.md), so we own it.

public struct ReconnectBackoff: Sendable, Equatable {
    public var baseMillis: UInt64
    public var capMillis: UInt64
    /// Jitter as a fraction of the delay: the delay is spread over [d, d * (1 + jitter)].
    public var jitterFraction: Double
    public private(set) var failures: Int = 0

    public init(baseMillis: UInt64 = 2_000, capMillis: UInt64 = 60_000, jitterFraction: Double = 0.2) {
        self.baseMillis = baseMillis
        self.capMillis = capMillis
        self.jitterFraction = jitterFraction
    }

    /// The delay before the next attempt, without jitter.
    public var nominalDelayMillis: UInt64 {
        let shift = min(failures, 20)
        let delay = baseMillis << UInt64(shift)
        return min(delay, capMillis)
    }

    /// Records a failed attempt and returns how long to wait. `unitRandom` in [0, 1) spreads
    /// the fleet so a broker restart is not met by every car at the same second.
    public mutating func nextDelayMillis(unitRandom: Double) -> UInt64 {
        let nominal = nominalDelayMillis
        failures += 1
        let spread = Double(nominal) * jitterFraction * min(max(unitRandom, 0), 1)
        return nominal + UInt64(spread)
    }

    /// A CONNACK with reason 0 resets the sequence.
    public mutating func reset() { failures = 0 }
}

// What the radio channel does to a frame between two chips: the true distance over time, noise
// on the arrival time, non-line-of-sight bias, loss, and the attacks of
// shared/reference/dw3000.md section 3 (a relay; a ghost-peak early detection).
import Protocol

/// The true distance between two chips as a function of simulation time.
public enum UWBDistanceProfile: Sendable, Equatable {
    case fixed(metres: Double)
    /// Starts at `startMetres` and changes at `metresPerSecond` (negative: walking towards),
    /// never below `minimumMetres`.
    case walk(startMetres: Double, metresPerSecond: Double, minimumMetres: Double = 0.1)
    /// Linear between (seconds, metres) points; constant before the first and after the last.
    case waypoints([Waypoint])

    public struct Waypoint: Sendable, Equatable {
        public var seconds: Double
        public var metres: Double
        public init(seconds: Double, metres: Double) { self.seconds = seconds; self.metres = metres }
    }

    public func metres(atSeconds t: Double) -> Double {
        switch self {
        case .fixed(let metres):
            return metres
        case .walk(let start, let speed, let minimum):
            return max(minimum, start + speed * t)
        case .waypoints(let points):
            guard let first = points.first, let last = points.last else { return 0 }
            if t <= first.seconds { return first.metres }
            if t >= last.seconds { return last.metres }
            for (a, b) in zip(points, points.dropFirst()) where t <= b.seconds {
                let span = b.seconds - a.seconds
                return span <= 0 ? b.metres : a.metres + (b.metres - a.metres) * (t - a.seconds) / span
            }
            return last.metres
        }
    }
}

public enum UWBAttack: Sendable, Equatable {
    /// A relay between the two chips: frames travel `pathMetres` (to the relay and on) plus
    /// `processingNanos`, whatever the true distance, and reach chips out of range. It can only
    /// make the measured distance longer than the relay path.
    case relay(pathMetres: Double, processingNanos: Double)
    /// A ghost-peak / early-detect attack on first-path detection: with `successProbability`
    /// the receiver timestamps the frame `advanceMetres` early. The attacker does not know the
    /// STS key, so with STS on the forged first path does not correlate (low ACC_QUAL).
    case earlyDetection(successProbability: Double, advanceMetres: Double)
}

public struct UWBChannelModel: Sendable, Equatable {
    public var distance: UWBDistanceProfile = .fixed(metres: 1.5)
    /// Standard deviation of the arrival-time noise, in metres of travel.
    public var timestampNoiseMetres: Double = 0.02
    /// Probability that a frame arrives over a reflected first path, and the extra distance then.
    public var nlosProbability: Double = 0
    public var nlosExtraMetres: ClosedRange<Double> = 0.3...1.5
    public var packetLossProbability: Double = 0
    /// Probability that a heard frame is unusable (an FCS error at the receiver).
    public var frameErrorProbability: Double = 0
    /// Beyond this a frame is not heard (without a relay).
    public var maximumRangeMetres: Double = 60
    public var attacks: [UWBAttack] = []

    public init(distance: UWBDistanceProfile = .fixed(metres: 1.5), timestampNoiseMetres: Double = 0.02) {
        self.distance = distance
        self.timestampNoiseMetres = timestampNoiseMetres
    }
}

// Every tunable of the proximity engine in one place, with the defaults the agent runs with.
// Distances are metres, times are monotonic milliseconds, RSSI is dBm.

public struct ProximityConfiguration: Sendable, Equatable {
    // MARK: Filter

    /// Standard deviation of one honest UWB range (DS-TWR on a DW3000: about 10 cm).
    public var measurementSigmaMetres: Double
    /// Acceleration spectral density of the constant-velocity model, m²/s³. A walking person
    /// changes radial speed by about 1 m/s within a second or two; 1.0 lets the filter follow
    /// a stop or a turn within a few rounds without chasing every noisy range.
    public var accelerationSpectralDensity: Double
    /// Velocity uncertainty when a track starts (nothing is known about the motion yet).
    public var initialVelocitySigma: Double
    /// Normalised innovation squared above which a range is an outlier (chi-square, 1 degree of
    /// freedom: 16 is a 4-sigma gate, so honest noise almost never trips it).
    public var innovationGate: Double
    /// Consecutive outliers tolerated before the filter believes them: the next one (if it
    /// agrees with them) re-initialises the track. A lone NLOS spike is dropped, a real jump
    /// is followed after this many rounds.
    public var maxConsecutiveRejections: Int
    /// How closely a run of outliers must agree with each other to count as a real jump;
    /// scattered outliers (multipath, a noisy attacker) never re-initialise the track.
    public var jumpConsistencyMetres: Double
    /// A gap longer than this between ranges restarts the track instead of predicting across it.
    public var filterResetGapMillis: UInt64
    /// An estimate whose last accepted range is older than this is not used (zone out of range).
    public var estimateStaleMillis: UInt64

    // MARK: Zones

    /// Outer edges of the zones: Immediate < 0.5, Unlock < 1.5, Near < 5, Approaching < 15.
    public var immediateMetres: Double
    public var unlockMetres: Double
    public var nearMetres: Double
    public var approachingMetres: Double
    /// Leaving a zone needs the distance above its edge plus the larger of these two margins.
    public var hysteresisMetres: Double
    public var hysteresisFraction: Double

    // MARK: Security

    /// Consecutive STS-valid rounds before a key counts as inside any zone (relay and
    /// distance-reduction attacks succeed per round; needing k in a row multiplies the odds).
    public var requiredConsecutiveValidRounds: Int
    /// STS quality (ACC_QUAL as a fraction of the STS length) below which a round is invalid,
    /// whatever the driver said (dw3000.md section 3: 60 %).
    public var stsQualityThreshold: Double
    /// Ranges outside this interval are treated as failed rounds. Slightly negative ranges are
    /// honest noise at very short range; far below zero or beyond any radio range is garbage.
    public var minimumValidDistanceMetres: Double
    public var maximumValidDistanceMetres: Double
    /// Unlock and trunk need an accepted range at most this old.
    public var authorizationFreshMillis: UInt64

    // MARK: BLE RSSI

    /// RSSI above which the key is close enough to start UWB ranging.
    public var wakeRSSI: Double
    /// A key UWB puts closer than `plausibilityDistanceMetres` whose smoothed RSSI is below
    /// this floor is implausible (one of the two radios is being relayed).
    public var rssiPlausibilityFloor: Double
    public var plausibilityDistanceMetres: Double
    /// RSSI older than this is "not available" and blocks nothing.
    public var rssiFreshMillis: UInt64
    /// Weight of a new RSSI sample in the smoothed value (single fades should not flag a key).
    public var rssiSmoothing: Double

    // MARK: Walk-away and bounds

    /// Lock when every key that was near has been out of the Near zone this long.
    public var walkAwayDelayMillis: UInt64
    /// Keys tracked at once; the least recently heard one is dropped for a new one.
    public var maxTrackedKeys: Int

    public init(measurementSigmaMetres: Double = 0.1,
                accelerationSpectralDensity: Double = 1.0,
                initialVelocitySigma: Double = 1.5,
                innovationGate: Double = 16,
                maxConsecutiveRejections: Int = 3,
                jumpConsistencyMetres: Double = 0.6,
                filterResetGapMillis: UInt64 = 1000,
                estimateStaleMillis: UInt64 = 1000,
                immediateMetres: Double = 0.5, unlockMetres: Double = 1.5,
                nearMetres: Double = 5, approachingMetres: Double = 15,
                hysteresisMetres: Double = 0.2, hysteresisFraction: Double = 0.1,
                requiredConsecutiveValidRounds: Int = 3,
                stsQualityThreshold: Double = 0.6,
                minimumValidDistanceMetres: Double = -0.5,
                maximumValidDistanceMetres: Double = 1000,
                authorizationFreshMillis: UInt64 = 500,
                wakeRSSI: Double = -70,
                rssiPlausibilityFloor: Double = -90,
                plausibilityDistanceMetres: Double = 2,
                rssiFreshMillis: UInt64 = 3000,
                rssiSmoothing: Double = 0.3,
                walkAwayDelayMillis: UInt64 = 10_000,
                maxTrackedKeys: Int = 16) {
        // Nonsense values are clamped rather than trapped: a bad config file must not crash
        // the agent, and a clamped value errs on the strict side.
        self.measurementSigmaMetres = Self.positive(measurementSigmaMetres, fallback: 0.1)
        self.accelerationSpectralDensity = Self.positive(accelerationSpectralDensity, fallback: 1.0)
        self.initialVelocitySigma = Self.positive(initialVelocitySigma, fallback: 1.5)
        self.innovationGate = Self.positive(innovationGate, fallback: 16)
        self.maxConsecutiveRejections = max(0, maxConsecutiveRejections)
        self.jumpConsistencyMetres = Self.positive(jumpConsistencyMetres, fallback: 0.6)
        self.filterResetGapMillis = max(1, filterResetGapMillis)
        self.estimateStaleMillis = estimateStaleMillis
        self.immediateMetres = immediateMetres
        self.unlockMetres = unlockMetres
        self.nearMetres = nearMetres
        self.approachingMetres = approachingMetres
        self.hysteresisMetres = hysteresisMetres.isFinite ? max(0, hysteresisMetres) : 0.2
        self.hysteresisFraction = hysteresisFraction.isFinite ? max(0, hysteresisFraction) : 0.1
        self.requiredConsecutiveValidRounds = max(1, requiredConsecutiveValidRounds)
        self.stsQualityThreshold = stsQualityThreshold.isFinite ? stsQualityThreshold : 0.6
        self.minimumValidDistanceMetres = minimumValidDistanceMetres
        self.maximumValidDistanceMetres = maximumValidDistanceMetres
        self.authorizationFreshMillis = authorizationFreshMillis
        self.wakeRSSI = wakeRSSI
        self.rssiPlausibilityFloor = rssiPlausibilityFloor
        self.plausibilityDistanceMetres = plausibilityDistanceMetres
        self.rssiFreshMillis = rssiFreshMillis
        self.rssiSmoothing = rssiSmoothing.isFinite ? min(1, max(0.01, rssiSmoothing)) : 0.3
        self.walkAwayDelayMillis = walkAwayDelayMillis
        self.maxTrackedKeys = max(1, maxTrackedKeys)
    }

    private static func positive(_ value: Double, fallback: Double) -> Double {
        value.isFinite && value > 0 ? value : fallback
    }

    /// The outer edge of `zone` (nil for out of range, which has none).
    public func edge(of zone: ProximityZone) -> Double? {
        switch zone {
        case .immediate: return immediateMetres
        case .unlock: return unlockMetres
        case .near: return nearMetres
        case .approaching: return approachingMetres
        case .outOfRange: return nil
        }
    }

    /// How far beyond its edge a distance must go to leave a zone.
    public func leaveMargin(forEdge edge: Double) -> Double {
        max(hysteresisMetres, hysteresisFraction * abs(edge))
    }
}

// What the engine knows about one key at one moment: the input to every decision and to the
// dashboard.

public struct ProximityEstimate: Sendable, Equatable {
    /// The zone a decision may rely on: the filtered zone, but out of range while the estimate
    /// is stale or fewer than k consecutive STS-valid rounds back it, and never nearer than
    /// Near while RSSI makes the distance implausible.
    public let zone: ProximityZone
    /// The filter's zone with hysteresis, before the security rules (for display and walk-away).
    public let filteredZone: ProximityZone
    /// Filtered distance (m) and radial velocity (m/s, negative approaching) at the last
    /// accepted range; nil before any.
    public let filteredDistanceMetres: Double?
    public let velocityMetresPerSecond: Double?
    /// The most recent range from an STS-valid round, whether or not the filter accepted it.
    public let lastRawDistanceMetres: Double?
    /// STS quality of the most recent round (nil after a failed round or before any).
    public let stsQuality: Double?
    /// STS-valid rounds in a row that the filter accepted since the track (re)started; an
    /// invalid or failed round resets it, an outlier the gate dropped leaves it as it was.
    public let consecutiveValidRounds: Int
    /// Milliseconds since the filter last accepted a range (nil: never).
    public let ageMillis: UInt64?
    /// False when BLE RSSI contradicts the UWB distance.
    public let plausible: Bool
    /// Smoothed BLE RSSI, when recent.
    public let rssiDBm: Double?
    /// Every round reported for this key: valid, invalid and failed.
    public let roundsTotal: UInt64
    /// Last time an accepted range left the key in Near or closer (walk-away; nil: never).
    public let lastNearMillis: UInt64?

    /// The estimate for a key the engine has never heard of.
    public static let unknown = ProximityEstimate(
        zone: .outOfRange, filteredZone: .outOfRange, filteredDistanceMetres: nil,
        velocityMetresPerSecond: nil, lastRawDistanceMetres: nil, stsQuality: nil,
        consecutiveValidRounds: 0, ageMillis: nil, plausible: true, rssiDBm: nil, roundsTotal: 0,
        lastNearMillis: nil)

    public init(zone: ProximityZone, filteredZone: ProximityZone, filteredDistanceMetres: Double?,
                velocityMetresPerSecond: Double?, lastRawDistanceMetres: Double?, stsQuality: Double?,
                consecutiveValidRounds: Int, ageMillis: UInt64?, plausible: Bool, rssiDBm: Double?,
                roundsTotal: UInt64, lastNearMillis: UInt64?) {
        self.zone = zone
        self.filteredZone = filteredZone
        self.filteredDistanceMetres = filteredDistanceMetres
        self.velocityMetresPerSecond = velocityMetresPerSecond
        self.lastRawDistanceMetres = lastRawDistanceMetres
        self.stsQuality = stsQuality
        self.consecutiveValidRounds = consecutiveValidRounds
        self.ageMillis = ageMillis
        self.plausible = plausible
        self.rssiDBm = rssiDBm
        self.roundsTotal = roundsTotal
        self.lastNearMillis = lastNearMillis
    }
}

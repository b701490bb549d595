// One key's proximity state: the range filter, the zone, the run of STS-valid rounds and the
// BLE signal. Fixed size (no collections), so hours of rounds cost no memory.

public struct ProximityTracker: Sendable, Equatable {
    public let configuration: ProximityConfiguration

    private var filter: RangeKalmanFilter
    private var rssi = RSSIMonitor()
    private(set) var filteredZone: ProximityZone = .outOfRange
    private(set) var consecutiveValidRounds = 0
    private(set) var roundsTotal: UInt64 = 0
    private var lastRawDistance: Double?
    private var lastSTSQuality: Double?
    /// Time of the newest input of any kind (ranges and failures arrive in time order; an
    /// older one means reordering or a clock fault).
    private(set) var lastInputMillis: UInt64?
    /// Time the filter last accepted (or started from) a range.
    private var lastAcceptedMillis: UInt64?
    /// Last time an accepted range left the key in Near or closer (walk-away).
    private(set) var lastNearMillis: UInt64?

    public init(configuration: ProximityConfiguration = ProximityConfiguration()) {
        self.configuration = configuration
        self.filter = RangeKalmanFilter(configuration: configuration)
    }

    /// One ranging round's result. `stsValid` is the driver's verdict; the round also has to
    /// meet the configured quality and carry a sane distance. Only valid rounds reach the filter.
    public mutating func observe(_ range: RangeMeasurement, stsValid: Bool, atMillis now: UInt64) {
        guard admit(now) else { return }
        let distance = range.distanceMetres
        let quality = range.stsQuality
        let valid = stsValid && quality.isFinite && quality >= configuration.stsQualityThreshold
            && distance.isFinite
            && distance >= configuration.minimumValidDistanceMetres
            && distance <= configuration.maximumValidDistanceMetres
        lastSTSQuality = quality.isFinite ? quality : nil
        guard valid else {
            // One bad round breaks the run: an attacker's lucky rounds must come in a row.
            consecutiveValidRounds = 0
            return
        }
        lastRawDistance = distance

        let restarted = filter.lastMillis.map { now >= $0 && now - $0 > configuration.filterResetGapMillis } ?? true
        let outcome = filter.update(measurement: distance, atMillis: now)
        // The run counts valid rounds that support the current track. A new track starts the
        // run at one: otherwise one forged first round followed by honest rounds the gate
        // rejects would add up to k. A gated-out round neither counts nor breaks the run (an
        // honest NLOS spike must not delay an unlock by k rounds).
        switch outcome {
        case .rejected, .ignored: return
        case .initialised, .reinitialised: consecutiveValidRounds = 1
        case .accepted: consecutiveValidRounds = consecutiveValidRounds < Int.max ? consecutiveValidRounds + 1 : Int.max
        }
        // After a gap the old zone means nothing; the new track must earn its zone afresh.
        if restarted { filteredZone = .outOfRange }
        if let filtered = filter.distance {
            filteredZone = ZoneHysteresis.next(from: filteredZone, distance: filtered, configuration: configuration)
        }
        lastAcceptedMillis = now
        if filteredZone <= .near { lastNearMillis = now }
    }

    /// A round lost on the air (nothing heard in time, a frame error, a late transmission):
    /// no evidence either way, so it neither counts towards the k valid rounds nor breaks the
    /// run. Only its number is kept. A long silence still breaks the run (the next range comes
    /// after a gap) and ages the estimate out.
    public mutating func observeLoss(atMillis now: UInt64) {
        roundsTotal = roundsTotal < UInt64.max ? roundsTotal + 1 : UInt64.max
    }

    /// A round that produced no range for a reason an attacker could cause (STS failure, bad
    /// authenticator, an unexpected or implausible frame): the run of valid rounds starts over.
    public mutating func observeFailure(atMillis now: UInt64) {
        _ = admit(now)
        consecutiveValidRounds = 0
        lastSTSQuality = nil
    }

    /// One BLE RSSI sample in dBm.
    public mutating func observe(rssi value: Double, atMillis now: UInt64) -> RangingWake {
        rssi.observe(value, atMillis: now, configuration: configuration)
    }

    public func estimate(atMillis now: UInt64) -> ProximityEstimate {
        let age = lastAcceptedMillis.map { now >= $0 ? now - $0 : 0 }
        let distance = age == nil ? nil : filter.distance
        let plausible = rssi.isPlausible(distance: distance, atMillis: now, configuration: configuration)
        var zone = filteredZone
        if age.map({ $0 > configuration.estimateStaleMillis }) ?? true
            || consecutiveValidRounds < configuration.requiredConsecutiveValidRounds {
            zone = .outOfRange
        } else if !plausible {
            zone = max(zone, .near)
        }
        return ProximityEstimate(
            zone: zone, filteredZone: filteredZone, filteredDistanceMetres: distance,
            velocityMetresPerSecond: distance == nil ? nil : filter.velocity,
            lastRawDistanceMetres: lastRawDistance, stsQuality: lastSTSQuality,
            consecutiveValidRounds: consecutiveValidRounds, ageMillis: age, plausible: plausible,
            rssiDBm: rssi.current(atMillis: now, configuration: configuration), roundsTotal: roundsTotal,
            lastNearMillis: lastNearMillis)
    }

    /// Counts a round and orders it in time. Returns false for an input older than the last
    /// one: it is not used, and the valid-round run restarts (the safe reading of a clock we
    /// cannot trust). A clock that went back further than the reset gap is taken as a new
    /// clock: the track starts over from scratch.
    private mutating func admit(_ now: UInt64) -> Bool {
        roundsTotal = roundsTotal < UInt64.max ? roundsTotal + 1 : UInt64.max
        guard let last = lastInputMillis, now < last else {
            // Rounds separated by a long silence are not consecutive: the run starts over.
            if let last = lastInputMillis, now - last > configuration.filterResetGapMillis {
                consecutiveValidRounds = 0
            }
            lastInputMillis = now
            return true
        }
        consecutiveValidRounds = 0
        if last - now > configuration.filterResetGapMillis {
            startOver(at: now)
            return true
        }
        return false
    }

    private mutating func startOver(at now: UInt64) {
        filter.reset()
        filteredZone = .outOfRange
        lastAcceptedMillis = nil
        lastNearMillis = nil
        lastRawDistance = nil
        lastInputMillis = now
    }
}

// What every proximity decision hands back besides its verdict, so the agent can write down
// why a door did or did not open.

public struct ProximityEvidence: Sendable, Equatable {
    public let key: KeyID
    public let atMillis: UInt64
    /// The zone the decision used (after the security rules) and the filter's own zone.
    public let zone: ProximityZone
    public let filteredZone: ProximityZone
    public let filteredDistanceMetres: Double?
    public let lastRawDistanceMetres: Double?
    public let stsQuality: Double?
    public let consecutiveValidRounds: Int
    public let roundsTotal: UInt64
    /// Milliseconds since the last accepted range (nil: never ranged).
    public let ageMillis: UInt64?
    public let plausible: Bool
    public let rssiDBm: Double?
    public let lastNearMillis: UInt64?

    public init(key: KeyID, atMillis: UInt64, estimate: ProximityEstimate) {
        self.key = key
        self.atMillis = atMillis
        self.zone = estimate.zone
        self.filteredZone = estimate.filteredZone
        self.filteredDistanceMetres = estimate.filteredDistanceMetres
        self.lastRawDistanceMetres = estimate.lastRawDistanceMetres
        self.stsQuality = estimate.stsQuality
        self.consecutiveValidRounds = estimate.consecutiveValidRounds
        self.roundsTotal = estimate.roundsTotal
        self.ageMillis = estimate.ageMillis
        self.plausible = estimate.plausible
        self.rssiDBm = estimate.rssiDBm
        self.lastNearMillis = estimate.lastNearMillis
    }
}

/// Why a key is not close enough for a command that needs it.
public enum NotInProximityReason: String, Sendable, Equatable, CaseIterable {
    /// No accepted range for this key at all.
    case noRanging
    /// The last accepted range is older than the freshness bound.
    case stale
    /// Ranged, fresh, but filtered outside the Unlock zone.
    case tooFar
    /// Fewer than k STS-valid rounds in a row since the last invalid or failed one.
    case notEnoughValidRounds
    /// BLE RSSI contradicts the UWB distance.
    case implausible
}

public enum ProximityRefusal: Sendable, Equatable {
    case notInProximity(why: NotInProximityReason)
}

public enum ProximityVerdict: Sendable, Equatable {
    case allow
    case refuse(reason: ProximityRefusal)
}

/// The answer to "may this key do this command from where it is?".
public struct ProximityAuthorization: Sendable, Equatable {
    public let command: CommandCode
    public let verdict: ProximityVerdict
    /// False when the command does not depend on distance (lock, status...): the evidence is
    /// then informational only.
    public let proximityRequired: Bool
    public let evidence: ProximityEvidence

    public var isAllowed: Bool { verdict == .allow }
}

/// The answer to a door handle pull.
public struct PassiveEntryDecision: Sendable, Equatable {
    /// The key allowed to unlock (the nearest qualifying one), or nil.
    public let key: KeyID?
    /// One record per authenticated key considered, with its own verdict.
    public let candidates: [ProximityAuthorization]
}

public enum WalkAwayReason: String, Sendable, Equatable {
    /// Lock now: every key that was near has been away for the walk-away delay.
    case everyKeyAway
    case alreadyLocked
    case doorOpen
    /// No key was near during this unlocked period: nobody walked away (a remote unlock).
    case noKeyWasNear
    /// A key is still near, or left less than the delay ago.
    case keyNearby
    /// This walk-away already produced its lock; a key must come back before another.
    case alreadyFired
}

public struct WalkAwayDecision: Sendable, Equatable {
    public let lock: Bool
    public let reason: WalkAwayReason
    /// The keys that were near during this unlocked period, with their last near time.
    public let evidence: [ProximityEvidence]
}

// Which commands need the key close, and the checks that say it is. Pure functions of an
// estimate; the engine supplies the estimate and the clock.

public struct ProximityPolicy: Sendable, Equatable {
    public let configuration: ProximityConfiguration

    public init(configuration: ProximityConfiguration = ProximityConfiguration()) {
        self.configuration = configuration
    }

    /// Unlock and trunk open the car to whoever stands next to it, so they need the key there;
    /// lock only makes the car safer and works anywhere in radio range; commands that move no
    /// actuator (status, revoke, ranging setup...) change nothing physical. Keyed on
    /// `movesActuator` rather than a list so that a command added later which moves something
    /// needs proximity until someone decides otherwise.
    public func requiresProximity(_ command: CommandCode) -> Bool {
        command == .lock ? false : command.movesActuator
    }

    public func authorize(command: CommandCode, key: KeyID, estimate: ProximityEstimate,
                          atMillis now: UInt64) -> ProximityAuthorization {
        let evidence = ProximityEvidence(key: key, atMillis: now, estimate: estimate)
        guard requiresProximity(command) else {
            return ProximityAuthorization(command: command, verdict: .allow, proximityRequired: false,
                                          evidence: evidence)
        }
        let verdict: ProximityVerdict
        if let why = refusal(for: estimate) {
            verdict = .refuse(reason: .notInProximity(why: why))
        } else {
            verdict = .allow
        }
        return ProximityAuthorization(command: command, verdict: verdict, proximityRequired: true,
                                      evidence: evidence)
    }

    /// The first rule the estimate breaks for an unlock, or nil when it may unlock. Ordered so
    /// the reason names the most basic missing thing (no ranging before stale before...).
    public func refusal(for estimate: ProximityEstimate) -> NotInProximityReason? {
        guard let age = estimate.ageMillis, estimate.filteredDistanceMetres != nil else { return .noRanging }
        if age > configuration.authorizationFreshMillis { return .stale }
        if estimate.consecutiveValidRounds < configuration.requiredConsecutiveValidRounds {
            return .notEnoughValidRounds
        }
        if !estimate.plausible { return .implausible }
        if estimate.filteredZone > .unlock { return .tooFar }
        return nil
    }
}

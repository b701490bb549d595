// UWB ranging on the agent loop: one ranging session per phone link that set one up
// (CarAction.startRanging), a DS-TWR round for each at its interval, every outcome into the
// proximity engine, and the decisions that use distance (unlock and trunk need the Unlock zone,
// passive entry, walk-away lock), each recorded with its evidence.
//
// Power: with no ranging session there is no deadline (no wake-ups); a session's rounds run
// only while the link's BLE RSSI says the phone is near enough (or the link has no RSSI).
import Drivers
import Protocol

final class UWBService: LoopSource {
    /// The last outcomes kept for the console.
    static let recentCapacity = 16

    struct Session {
        let grant: RangingGrant
        var nextRoundAt: UInt64
        var rounds: UInt64 = 0
        var failures: UInt64 = 0
        /// Rounds not run because the link's RSSI said the phone is too far to be worth it.
        var skippedForRSSI: UInt64 = 0
    }

    struct Recent {
        let link: LinkID
        let key: KeyID
        let atMillis: UInt64
        let outcome: RangingOutcome
    }

    let radio: any UWBRadio
    private(set) var engine: ProximityEngine
    let events: ProximityEvents
    private let log: AgentLog
    private(set) var sessions: [LinkID: Session] = [:]
    private(set) var recent: [Recent] = []
    private(set) var failuresByReason: [RangingFailure: UInt64] = [:]
    /// The link's RSSI now (dBm), nil when the transport has none (the simulated socket).
    var rssi: (LinkID) -> Int? = { _ in nil }
    /// Config "proximity": passive entry and walk-away lock can each be turned off.
    var passiveEntryEnabled = true
    var walkAwayEnabled = true
    /// Told when the nearest key's zone changes (the cloud's state report).
    var onZoneChanged: ((ProximityZone, Double?) -> Void)?
    private var lastReportedZone: ProximityZone = .outOfRange

    init(radio: any UWBRadio, configuration: ProximityConfiguration, events: ProximityEvents, log: AgentLog) {
        self.radio = radio
        self.engine = ProximityEngine(configuration: configuration)
        self.events = events
        self.log = log
    }

    /// What the car's engine may accept in a rangingSetup (the chip is configured once).
    static func capabilities(for board: BoardUWB) -> UWBCapabilities {
        var capabilities = UWBCapabilities()
        capabilities.channels = [board.channel]
        capabilities.preambleCodes = [board.preambleCode]
        capabilities.stsLengths = board.stsLength <= UInt16(UInt8.max) ? [UInt8(board.stsLength)] : []
        return capabilities
    }

    /// A new "proximity" configuration (from the cloud): the engine starts over with it, so
    /// every key needs its k valid rounds again (fails closed, never keeps a zone it no longer
    /// proved under the new rule).
    func reconfigure(_ settings: ProximitySettings) {
        engine = ProximityEngine(configuration: settings.configuration)
        passiveEntryEnabled = settings.passiveEntry
        walkAwayEnabled = settings.walkAwaySeconds > 0
        log.info("uwb: proximity settings changed (unlock zone \(settings.unlockZoneCentimetres) cm, \(settings.validRounds) valid rounds, "
                 + "fresh \(settings.freshMillis) ms, walk-away \(settings.walkAwaySeconds) s)")
    }

    // MARK: Sessions

    func start(_ grant: RangingGrant, nowMillis: UInt64) {
        radio.open(grant)
        sessions[grant.link] = Session(grant: grant, nextRoundAt: nowMillis)
        log.info("\(grant.link) uwb: ranging with key \(grant.keyID) every \(grant.setup.roundIntervalMillis) ms")
    }

    func stop(_ link: LinkID) {
        radio.close(link)
        guard let session = sessions.removeValue(forKey: link) else { return }
        log.info("\(link) uwb: ranging stopped after \(session.rounds) rounds (\(session.failures) without a range)")
    }

    // MARK: LoopSource

    func pollSet() -> [(FileDescriptor, PollEvents)] { radio.pollDescriptor.map { [($0, .readable)] } ?? [] }

    func nextDeadline() -> UInt64? {
        if let pending = radio.pendingDeadline { return pending }
        return sessions.values.map(\.nextRoundAt).min()
    }

    func process(_ ready: [PollEvents], nowMillis: UInt64) {
        // A round on the chip first: nothing else starts until it ended.
        if radio.pendingDeadline != nil {
            guard let (link, outcome) = radio.service(nowMillis: nowMillis) else { return }
            finished(link, outcome, nowMillis: nowMillis)
        }
        for link in sessions.keys.sorted(by: { $0.rawValue < $1.rawValue }) {
            guard var session = sessions[link], nowMillis >= session.nextRoundAt else { continue }
            session.nextRoundAt = nowMillis + UInt64(session.grant.setup.roundIntervalMillis)
            sessions[link] = session
            if let dBm = rssi(link), engine.observe(rssi: Double(dBm), key: session.grant.keyID, atMillis: nowMillis) == .stayIdle {
                sessions[link]?.skippedForRSSI += 1
                continue
            }
            switch radio.startRound(for: link, nowMillis: nowMillis) {
            case .finished(let outcome): finished(link, outcome, nowMillis: nowMillis)
            case .pending: reportZone(nowMillis: nowMillis); return   // the chip is busy until it ends
            case .noSession: continue
            }
        }
        reportZone(nowMillis: nowMillis)
    }

    private func finished(_ link: LinkID, _ outcome: RangingOutcome, nowMillis: UInt64) {
        guard var session = sessions[link] else { return }
        let key = session.grant.keyID
        session.rounds += 1
        switch outcome {
        case .range(let range):
            engine.observe(range, stsValid: true, key: key, atMillis: nowMillis)
        case .failed(let reason):
            session.failures += 1
            failuresByReason[reason, default: 0] += 1
            switch reason {
            case .timeout, .receiveError, .lateTransmit:
                engine.observeLoss(key: key, atMillis: nowMillis)
            case .stsInvalid, .badAuthenticator, .unexpectedFrame, .implausible:
                engine.observeFailure(key: key, atMillis: nowMillis)
            }
        case .completed:
            break
        }
        sessions[link] = session
        remember(Recent(link: link, key: key, atMillis: nowMillis, outcome: outcome))
    }

    // MARK: Decisions

    /// Whether `command` needs the key near (unlock, trunk).
    func requiresProximity(_ command: CommandCode) -> Bool { engine.policy.requiresProximity(command) }

    /// The decision for a phone's command, recorded with its evidence; nil when the command
    /// does not depend on distance.
    func authorize(_ request: CommandRequest, nowMillis: UInt64) -> ProximityAuthorization? {
        guard requiresProximity(request.command) else { return nil }
        // A chip that stops answering produces failed rounds, which reset the valid-round count,
        // and no fresh range: the policy refuses on its own (fails closed).
        let decision = engine.authorize(command: request.command, key: request.keyID, atMillis: nowMillis)
        events.record(action: .command(request.command), result: decision.isAllowed ? "allowed" : "refused", key: request.keyID,
                      refusal: Self.reason(decision), evidence: [decision.evidence], extra: [("link", .integer(Int64(request.link.rawValue)))])
        return decision
    }

    /// A door handle pull: the key passive entry may unlock for, if any (recorded).
    func passiveEntry(nowMillis: UInt64) -> KeyID? {
        guard passiveEntryEnabled else { return nil }
        let keys = sessions.values.sorted { $0.grant.link.rawValue < $1.grant.link.rawValue }
            .filter { $0.grant.record.permissions.contains(.unlock) }.map(\.grant.keyID)
        let decision = engine.passiveEntry(handlePulledAtMillis: nowMillis, authenticatedKeys: keys)
        let refusal = decision.key == nil ? (decision.candidates.compactMap(Self.reason).first ?? .noRanging) : nil
        let recorded = events.record(action: .passiveEntry, result: decision.key == nil ? "refused" : "allowed", key: decision.key,
                                     refusal: refusal, evidence: decision.candidates.map(\.evidence))
        // Never an unlock without its audit record (a dropped events table, a broken disk).
        return recorded ? decision.key : nil
    }

    /// Once a second: true when the car should lock because every key that was near walked away.
    func walkAway(nowMillis: UInt64, state: VehicleState) -> Bool {
        radio.housekeeping(nowMillis: nowMillis)
        guard walkAwayEnabled else { return false }
        let decision = engine.walkAway(atMillis: nowMillis, doorsClosed: !state.contains(.anyDoorOpen),
                                       locked: state.contains(.locked), keys: engine.trackedKeys)
        if decision.lock {
            events.record(action: .walkAwayLock, result: "locked", key: nil, refusal: nil, evidence: decision.evidence)
        }
        return decision.lock
    }

    /// The nearest key's estimate now (status, cloud).
    func nearest(nowMillis: UInt64) -> (key: KeyID, estimate: ProximityEstimate)? {
        engine.trackedKeys.map { ($0, engine.estimate(key: $0, atMillis: nowMillis)) }
            .min { ($0.1.filteredZone, $0.1.filteredDistanceMetres ?? .infinity) < ($1.1.filteredZone, $1.1.filteredDistanceMetres ?? .infinity) }
    }

    static func reason(_ decision: ProximityAuthorization) -> NotInProximityReason? {
        if case .refuse(.notInProximity(let why)) = decision.verdict { return why }
        return nil
    }

    private func remember(_ entry: Recent) {
        recent.append(entry)
        if recent.count > Self.recentCapacity { recent.removeFirst(recent.count - Self.recentCapacity) }
    }

    private func reportZone(nowMillis: UInt64) {
        let nearest = self.nearest(nowMillis: nowMillis)
        let zone = nearest?.estimate.filteredZone ?? .outOfRange
        guard zone != lastReportedZone else { return }
        lastReportedZone = zone
        onZoneChanged?(zone, nearest?.estimate.filteredDistanceMetres)
    }
}

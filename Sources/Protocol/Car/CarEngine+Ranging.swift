// The rangingSetup command (docs/protocol.md section 19, rule S9b): checked, answered and
// turned into a RangingGrant without involving the actuator layer; and the
// rangingCapabilities command (rule S9c), answered with what this car's module accepts.

/// Bounds on ranging per key session.
enum CarRangingPolicy {
    /// Setups per key session. Each one's ID is remembered (never reused), and 32 is far more
    /// than a phone needs in a 300 s session.
    static let maxSetupsPerSession = 32
}

extension CarProtocolEngine {
    /// Runs after the common checks (S4-S9). Throws the fault for the Response; on success
    /// emits startRanging, the audit record and the ok Response, in that order.
    mutating func startRanging(_ body: CommandBody, session: inout CarSession, record: KeyRecord, link: LinkID,
                               now: ProtocolTime) throws(FaultCode) -> [CarAction] {
        let setup: RangingSetup
        do throws(RangingSetupError) {
            setup = try RangingSetup.decode(body.args)
            guard let capabilities = configuration.uwb else { throw .unsupported("no UWB module") }
            try capabilities.check(setup)
            // A reused ID would rederive the same STS key and IV counters: the STS of rounds
            // already on the air would repeat, and a listener could pre-send them.
            guard !session.usedRangingSessionIDs.contains(setup.sessionID) else {
                throw .unsupported("session ID already used in this session")
            }
            guard session.usedRangingSessionIDs.count < CarRangingPolicy.maxSetupsPerSession else {
                throw .unsupported("too many ranging setups in this session")
            }
        } catch {
            throw error.fault
        }
        let material = RangingMaterial(rangingKey: session.rangingKey, setup: setup)
        session.usedRangingSessionIDs.append(setup.sessionID)
        session.ranging = setup
        links[link] = .established(session)
        let grant = RangingGrant(link: link, keyID: session.keyID, record: record, setup: setup, material: material)
        let response = ResponseBody(command: .rangingSetup, fault: nil, vehicleState: lastVehicleState,
                                    carTime: session.sessionClock(at: now.monotonicMillis))
        let audit = CarAction.audit(AuditRecord(.commandCompleted, link: link, keyID: session.keyID,
                                                command: .rangingSetup, now: now))
        return [.startRanging(grant), audit] + sendInSession(response, session: session, link: link, now: now)
    }

    /// Rule S9c: no arguments (`malformedMessage`); a car without a module answers
    /// `rangingUnsupported`; otherwise the ok Response with the capabilities after its nine
    /// bytes, and a `commandCompleted` audit. Nothing else changes.
    mutating func answerRangingCapabilities(_ body: CommandBody, session: CarSession, link: LinkID,
                                            now: ProtocolTime) throws(FaultCode) -> [CarAction] {
        guard body.args.isEmpty else { throw .malformedMessage }
        guard let capabilities = configuration.uwb else { throw .rangingUnsupported }
        let answer = RangingCapabilitiesAnswer(vehicleState: lastVehicleState, carTime: session.sessionClock(at: now.monotonicMillis),
                                               capabilities: capabilities)
        let audit = CarAction.audit(AuditRecord(.commandCompleted, link: link, keyID: session.keyID,
                                                command: .rangingCapabilities, now: now))
        return [audit] + sendInSession(plaintext: answer.encoded(), session: session, link: link, now: now)
    }
}

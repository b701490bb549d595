// The car side of protocol v1 as a pure state machine: bytes and time in, actions out.
// No IO, no clock reads, no randomness except through the injected sources.

public struct CarProtocolEngine: Sendable {
    public let configuration: CarProtocolConfiguration
    let identity: any ProtocolSigner
    let keys: any KeyDirectory
    let certificateVerifier: (any ShareCertificateVerifier)?
    let random: any RandomSource
    let ephemeralKeys: any EphemeralKeySource

    var links: [LinkID: LinkState] = [:]
    var usedChallenges: UsedChallengeMemory
    /// Failures per peer (rule R0); no car-wide record, which a stranger could fill.
    var rateLimiter: RateLimiter
    /// Handshake budgets and peer addresses (rule H2).
    var admission: LinkAdmission
    /// Accepted commands between `.perform` and `complete`, also after their session ended, so
    /// a late completion is still audited. Bounded; oldest tokens are dropped first.
    var inFlight: [CommandToken: CommandRequest] = [:]
    var nextToken: UInt64 = 1
    /// Last state the agent reported; fault Responses carry it rather than a made-up value.
    /// The agent seeds it before the first message (`observeVehicleState`): until then a
    /// Response would tell the phone "unlocked" about a locked car.
    var lastVehicleState: VehicleState = []
    /// The open pairing window, if any (owner enrollment).
    var pairingWindow: PairingWindow?
    /// Pairing challenges that expired unanswered, by the link they were issued on, with the
    /// key of their PairingHello: a late PairingProof on that link is `challengeExpired` (rule
    /// Q2) until the link ends, whether or not the sweep forgot the attempt first. Bounded by
    /// the links the transport holds open (each entry dies with its link) and by a cap.
    var expiredPairings: [LinkID: KeyID] = [:]
    /// Enrollments handed to the agent with `.enroll`, by token.
    var pendingEnrollments: [CommandToken: PendingEnrollment] = [:]
    /// What an in-flight revoke command revokes, by token: its sessions end on success.
    var revocationTargets: [CommandToken: RevocationTarget] = [:]

    public init(configuration: CarProtocolConfiguration,
                identity: any ProtocolSigner,
                keys: any KeyDirectory,
                certificateVerifier: (any ShareCertificateVerifier)? = nil,
                random: any RandomSource = SystemRandom(),
                ephemeralKeys: any EphemeralKeySource = SystemEphemeralKeySource()) {
        self.configuration = configuration
        self.identity = identity
        self.keys = keys
        self.certificateVerifier = certificateVerifier
        self.random = random
        self.ephemeralKeys = ephemeralKeys
        self.usedChallenges = UsedChallengeMemory(capacity: configuration.usedChallengeMemory)
        self.rateLimiter = RateLimiter(policy: configuration.rateLimit, capacity: configuration.rateLimitedLinkMemory)
        self.admission = LinkAdmission(perPeer: configuration.handshakeBudgetPerPeer,
                                       carWide: configuration.handshakeBudgetCarWide,
                                       capacity: configuration.rateLimitedLinkMemory)
    }

    /// A new link, with the transport's peer address when it has one (BLE): failures and the
    /// handshake budget then follow the peer across reconnects. Without one the link is its
    /// own peer.
    public mutating func linkOpened(_ link: LinkID, peerAddress: String?) {
        admission.opened(link, peer: peerAddress)
    }

    /// Which link the transport closes first when a newcomer needs a slot: the lowest value,
    /// oldest first. 0: no valid Hello yet; 1: in a handshake but repeating Hellos or failing
    /// (a flood, not a phone); 2: in a handshake. nil: never (a session, an enrollment).
    public func reclaimOrder(of link: LinkID) -> Int? {
        switch phase(of: link) {
        case .idle: return 0
        case .handshaking:
            let suspect = admission.hasRepeated(link) || rateLimiter.hasHistory(admission.subject(of: link))
            return suspect ? 1 : 2
        case .enrolling, .established: return nil
        }
    }

    /// Whether `link` holds a session of a shared key: an owner's Hello may end it for a slot
    /// (rule H1), so a newcomer over the limit is worth hearing out while one exists.
    public func holdsSharedSession(_ link: LinkID) -> Bool {
        if case .established(let session)? = links[link] { return session.record.role == .shared }
        return false
    }

    /// How far `link` got: the transport reclaims idle links first, then handshaking ones,
    /// never a session or an enrollment.
    public func phase(of link: LinkID) -> LinkPhase {
        switch links[link] {
        case nil: return .idle
        case .challenged?, .pairing?: return .handshaking
        case .enrolling?: return .enrolling
        case .established?: return .established
        }
    }

    /// Takes the car's current state (lock, doors, trunk) for the Responses the engine sends
    /// on its own: faults, refusals, session ends. The agent calls it before handing the
    /// engine a message or a tick, so a state changed elsewhere (a remote command, a door
    /// switch, start-up) is never reported stale.
    public mutating func observeVehicleState(_ state: VehicleState) {
        lastVehicleState = state
    }

    /// The state fault Responses carry now (tests, diagnostics).
    public var reportedVehicleState: VehicleState { lastVehicleState }

    /// The car identity public key phones pin at enrollment.
    public var identityPublicKey: P256PublicKey { identity.publicKey }

    /// Handles one message received on `link`.
    public mutating func receive(_ bytes: Bytes, from link: LinkID, now: ProtocolTime) -> [CarAction] {
        if case .established = links[link] {
            return receiveInSession(bytes, link: link, now: now)
        }
        if case .enrolling = links[link] {
            // The agent is enrolling this link's key; the PairingResult comes first.
            return rejectBeforeSession(.busy, link: link, keyID: pendingKeyID(link), now: now, countFailure: false)
        }
        if rateLimiter.isBlocked(admission.subject(of: link), now: now.monotonicMillis) {
            // R0: this peer is blocked. The link is closed: holding it would only hold a slot.
            let keyID = pendingKeyID(link)
            return rejectBeforeSession(.rateLimited, link: link, keyID: keyID, now: now, countFailure: false)
                + dropBeforeSession(link)
        }
        let message: Message
        do throws(MessageFormatError) {
            message = try Message.decode(bytes)
        } catch {
            return rejectBeforeSession(error.fault, link: link, keyID: pendingKeyID(link), now: now)
        }
        switch message {
        case .hello(let hello): return handleHello(hello, raw: bytes, link: link, now: now)
        case .authResponse(let response): return handleAuthResponse(response, raw: bytes, link: link, now: now)
        case .pairingHello(let hello): return handlePairingHello(hello, raw: bytes, link: link, now: now)
        case .pairingProof(let proof): return handlePairingProof(proof, link: link, now: now)
        case .challenge, .encrypted, .fault, .pairingChallenge, .pairingResult, .advertisingKeyGrant:
            return rejectBeforeSession(.unexpectedMessage, link: link, keyID: pendingKeyID(link), now: now)
        }
    }

    /// Finishes a command announced by `.perform`: `result` nil means it was carried out.
    /// Emits the encrypted Response, or only an audit record if the session is gone.
    public mutating func complete(_ token: CommandToken, result: FaultCode?, vehicleState: VehicleState,
                                  now: ProtocolTime) -> [CarAction] {
        guard let request = inFlight.removeValue(forKey: token) else { return [] }
        lastVehicleState = vehicleState
        let revoked = revocationTargets.removeValue(forKey: token)
        var actions: [CarAction]
        if case .established(var session)? = links[request.link], session.inFlight == token {
            session.inFlight = nil
            let body = ResponseBody(command: request.command, fault: result, vehicleState: vehicleState,
                                    carTime: session.sessionClock(at: now.monotonicMillis))
            let audit = CarAction.audit(AuditRecord(.commandCompleted, link: request.link, keyID: request.keyID,
                                                    command: request.command, fault: result, now: now))
            actions = [audit] + sendInSession(body, session: session, link: request.link, now: now)
        } else {
            actions = [.audit(AuditRecord(.completionDropped, link: request.link, keyID: request.keyID,
                                          command: request.command, fault: result, now: now))]
        }
        // An applied revocation ends the sessions it affects, even if its own session is gone.
        if let revoked, result == nil {
            actions.append(.audit(AuditRecord(.revocationApplied, link: request.link, keyID: request.keyID,
                                              target: revoked, now: now)))
            actions += terminateSessions(revokedBy: revoked, now: now)
        }
        return actions
    }

    /// Ends every session and pending handshake of `keyID` at once (revocation). The phone gets
    /// a final encrypted Response carrying `reason`, then the link is closed.
    public mutating func terminateSessions(of keyID: KeyID, reason: FaultCode = .revoked, now: ProtocolTime) -> [CarAction] {
        terminateSessions(where: { id, _ in id == keyID }, reason: reason, now: now)
    }

    /// Ends every session and pending handshake a revocation affects: the key it names, keys
    /// installed from (or presenting) the share it names, and shares issued by an owner key
    /// it names. Use it for revocations that arrive outside a session (cloud); a revoke
    /// command in a session does this itself when completed.
    public mutating func terminateSessions(revokedBy target: RevocationTarget, now: ProtocolTime) -> [CarAction] {
        terminateSessions(where: { keyID, record in
            switch target {
            case .key(let revoked): return keyID == revoked || record.share?.issuer == revoked
            case .serial(let serial): return record.share?.serial == serial
            }
        }, reason: .revoked, now: now)
    }

    mutating func terminateSessions(where affected: (KeyID, KeyRecord) -> Bool, reason: FaultCode,
                                    now: ProtocolTime) -> [CarAction] {
        var actions: [CarAction] = []
        for (link, state) in links.sorted(by: { $0.key.rawValue < $1.key.rawValue }) {
            switch state {
            case .established(let session) where affected(session.keyID, session.record):
                actions += closeSession(link, session: session, reason: reason, now: now)
            case .challenged(let pending) where affected(pending.keyID, pending.record):
                links[link] = nil
                usedChallenges.insert(pending.challenge)
                actions += [.audit(AuditRecord(.sessionClosed, link: link, keyID: pending.keyID, fault: reason, now: now)),
                            .closeLink(link)]
            default:
                continue
            }
        }
        return actions
    }

    /// Housekeeping: closes expired sessions and forgets expired challenges. Call periodically.
    public mutating func tick(now: ProtocolTime) -> [CarAction] {
        var actions: [CarAction] = []
        sweepExpiredChallenges(now: now)
        for (link, state) in links.sorted(by: { $0.key.rawValue < $1.key.rawValue }) {
            if case .established(let session) = state, session.isExpired(at: now.monotonicMillis) {
                actions += closeSession(link, session: session, reason: .sessionExpired, now: now)
            }
        }
        actions += expirePairingWindow(now: now)
        return actions
    }

    /// Forgets every handshake and pairing challenge whose lifetime has passed, remembering
    /// where it was issued and for which key. Run before any answer that depends on a
    /// challenge (rules A1 and Q1) as well as on `tick`, so the answer to a late or misplaced
    /// message is the same whenever the periodic sweep last ran.
    mutating func sweepExpiredChallenges(now: ProtocolTime) {
        for (link, state) in links.sorted(by: { $0.key.rawValue < $1.key.rawValue }) {
            switch state {
            case .challenged(let pending) where isExpired(pending, now: now):
                links[link] = nil
                // Remembered as expired on this link, so a late AuthResponse is answered
                // challengeExpired (rule A3) with its key ID, not reusedChallenge.
                usedChallenges.insert(pending.challenge, expiredOn: link, keyID: pending.keyID)
            case .pairing(let pending) where now.monotonicMillis > pending.issuedAtMillis + configuration.challengeLifetimeMillis:
                links[link] = nil
                usedChallenges.insert(pending.challenge)
                rememberExpiredPairing(on: link, keyID: KeyID(publicKey: pending.phoneKey))
            default:
                continue
            }
        }
    }

    mutating func rememberExpiredPairing(on link: LinkID, keyID: KeyID) {
        if expiredPairings[link] == nil, expiredPairings.count >= configuration.rateLimitedLinkMemory,
           let oldest = expiredPairings.keys.min(by: { $0.rawValue < $1.rawValue }) {
            expiredPairings.removeValue(forKey: oldest)
        }
        expiredPairings[link] = keyID
    }

    /// The transport lost the link: drop its state (a pending challenge counts as used).
    public mutating func linkClosed(_ link: LinkID, now: ProtocolTime) -> [CarAction] {
        admission.closed(link)
        expiredPairings.removeValue(forKey: link)
        switch links.removeValue(forKey: link) {
        case .challenged(let pending)?:
            usedChallenges.insert(pending.challenge)
            return []
        case .established(let session)?:
            let stop: [CarAction] = session.ranging != nil ? [.stopRanging(link)] : []
            return stop + [.audit(AuditRecord(.sessionClosed, link: link, keyID: session.keyID, now: now))]
        case .pairing(let pending)?:
            usedChallenges.insert(pending.challenge)
            // The last attempt of a window without guesses left ended unconfirmed: close it now.
            return expirePairingWindow(now: now)
        case .enrolling?, nil:
            // An enrollment in progress still completes; only its PairingResult has nowhere to go.
            return []
        }
    }

    /// Links that currently hold a session (diagnostics, tests).
    public var establishedLinks: [LinkID] {
        links.compactMap { if case .established = $0.value { return $0.key } else { return nil } }.sorted { $0.rawValue < $1.rawValue }
    }

    func pendingKeyID(_ link: LinkID) -> KeyID? {
        switch links[link] {
        case .challenged(let pending)?: return pending.keyID
        case .established(let session)?: return session.keyID
        case .pairing(let pending)?: return KeyID(publicKey: pending.phoneKey)
        case .enrolling(let token)?: return pendingEnrollments[token]?.keyID
        case nil: return nil
        }
    }

    func isExpired(_ pending: PendingHandshake, now: ProtocolTime) -> Bool {
        now.monotonicMillis > pending.issuedAtMillis + configuration.challengeLifetimeMillis
    }
}

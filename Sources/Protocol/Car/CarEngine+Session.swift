// Commands inside an established session on the car side.

extension CarProtocolEngine {
    mutating func receiveInSession(_ bytes: Bytes, link: LinkID, now: ProtocolTime) -> [CarAction] {
        guard case .established(var session)? = links[link] else { return [] }
        if session.isExpired(at: now.monotonicMillis) {
            return closeSession(link, session: session, reason: .sessionExpired, now: now)
        }
        if rateLimiter.isBlocked(admission.subject(of: link), now: now.monotonicMillis) {
            return rejectInSession(.rateLimited, link: link, command: nil, now: now, countFailure: false)
        }

        // Step 1: authenticate. A failure here changes nothing.
        let plaintext: Bytes
        do throws(FaultCode) {
            let message = try decoded { () throws(MessageFormatError) in try Message.decode(bytes) }
            guard case .encrypted(let record) = message, record.type == .command else { throw .unexpectedMessage }
            plaintext = try session.channel.open(record)
        } catch {
            return rejectInSession(error, link: link, command: nil, now: now)
        }
        // Step 2: an authenticated command spends its counter whatever happens next, so a
        // refused command can never be replayed later to run.
        links[link] = .established(session)

        // Step 3: decide.
        var command: CommandCode?
        do throws(FaultCode) {
            let body = try decoded { () throws(MessageFormatError) in try CommandBody.decode(plaintext) }
            command = body.command
            guard session.inFlight == nil else { throw .busy }
            let record = try currentRecord(session.keyID, snapshot: session.record, certificate: session.certificate, now: now)
            try AccessPolicy.checkUsable(record, now: now)
            try AccessPolicy.checkPermitted(body.command, record)
            let carNow = session.sessionClock(at: now.monotonicMillis)
            guard body.expiresAt >= carNow else { throw .expiredCommand }
            guard Int64(body.expiresAt) - Int64(carNow) <= configuration.maxCommandLifetimeSeconds else {
                throw .lifetimeTooLong
            }
            if body.command == .rangingSetup {
                // Answered here: nothing to actuate, and the agent needs the material at once.
                return try startRanging(body, session: &session, record: record, link: link, now: now)
            }
            if body.command == .rangingCapabilities {
                return try answerRangingCapabilities(body, session: session, link: link, now: now)
            }
            if body.command == .revoke {
                // S8a: the signed object must verify (its faults never end the session).
                let revocation = try RevocationValidator.verify(body.args, vehicleID: configuration.vehicleID, keys: keys)
                return accept(body, session: &session, link: link, now: now, revocation: revocation)
            }
            return accept(body, session: &session, link: link, now: now)
        } catch {
            var actions = rejectInSession(error, link: link, command: command, now: now)
            // A key that is no longer valid ends the session after the phone has been told why.
            if [.revoked, .expired, .unknownKey].contains(error), case .established(let current)? = links[link] {
                actions += closeSession(link, session: current, reason: error, now: now, notify: false)
            }
            return actions
        }
    }

    private mutating func accept(_ body: CommandBody, session: inout CarSession, link: LinkID, now: ProtocolTime,
                                 revocation: VerifiedRevocation? = nil) -> [CarAction] {
        let token = CommandToken(nextToken)
        nextToken += 1
        let request = CommandRequest(token: token, link: link, keyID: session.keyID, command: body.command, args: body.args)
        session.inFlight = token
        links[link] = .established(session)
        // Bound the table: forget the oldest orphaned completions first.
        if inFlight.count >= configuration.maxLinks * 4,
           let oldest = inFlight.keys.min(by: { $0.rawValue < $1.rawValue }) {
            inFlight.removeValue(forKey: oldest)
            revocationTargets.removeValue(forKey: oldest)
        }
        inFlight[token] = request
        if let revocation {
            revocationTargets[token] = revocation.target
            return [.revoke(RevocationRequest(token: token, link: link, keyID: session.keyID, revocation: revocation))]
        }
        guard body.command.movesActuator else { return [.perform(request)] }
        // The decision first: a host that holds effects until its records are durable then
        // never moves an actuator that the log does not already show was allowed.
        return [.audit(AuditRecord(.commandAccepted, link: link, keyID: session.keyID, command: body.command, now: now)),
                .perform(request)]
    }

    /// Seals a Response with the session's next counter. If the counters are exhausted the
    /// session ends instead (no nonce is ever reused).
    mutating func sendInSession(_ body: ResponseBody, session: CarSession, link: LinkID, now: ProtocolTime) -> [CarAction] {
        sendInSession(plaintext: body.encoded(), session: session, link: link, now: now)
    }

    /// The same for a Response plaintext that carries more than the nine bytes (19.2).
    mutating func sendInSession(plaintext: Bytes, session: CarSession, link: LinkID, now: ProtocolTime) -> [CarAction] {
        var session = session
        do throws(FaultCode) {
            let bytes = try session.channel.seal(.response, plaintext)
            links[link] = .established(session)
            return [.send(link, bytes)]
        } catch {
            return closeSession(link, session: session, reason: error, now: now, notify: false)
        }
    }

    /// Refuses a message inside a session with an encrypted Response carrying the fault.
    mutating func rejectInSession(_ fault: FaultCode, link: LinkID, command: CommandCode?, now: ProtocolTime,
                                  countFailure: Bool = true) -> [CarAction] {
        guard case .established(let session)? = links[link] else { return [] }
        if countFailure, fault.countsTowardRateLimit { rateLimiter.recordFailure(admission.subject(of: link), now: now.monotonicMillis) }
        let body = ResponseBody(command: command, fault: fault, vehicleState: lastVehicleState,
                                carTime: session.sessionClock(at: now.monotonicMillis))
        let audit = CarAction.audit(AuditRecord(.rejected, link: link, keyID: session.keyID, command: command,
                                                fault: fault, now: now))
        return sendInSession(body, session: session, link: link, now: now) + [audit]
    }

    /// Ends a session: optionally a last encrypted Response saying why, then close the link.
    mutating func closeSession(_ link: LinkID, session: CarSession, reason: FaultCode, now: ProtocolTime,
                               notify: Bool = true) -> [CarAction] {
        var actions: [CarAction] = []
        var session = session
        if notify, session.channel.canSend {
            let body = ResponseBody(command: nil, fault: reason, vehicleState: lastVehicleState,
                                    carTime: session.sessionClock(at: now.monotonicMillis))
            if let bytes = try? session.channel.seal(.response, body.encoded()) { actions.append(.send(link, bytes)) }
        }
        links[link] = nil
        if session.ranging != nil { actions.append(.stopRanging(link)) }
        actions.append(.audit(AuditRecord(.sessionClosed, link: link, keyID: session.keyID, fault: reason, now: now)))
        actions.append(.closeLink(link))
        return actions
    }

    /// Refuses a message before a session exists with a cleartext Fault. The failure that
    /// blocks the peer also closes the link (rule R0): a blocked link would only hold a slot.
    mutating func rejectBeforeSession(_ fault: FaultCode, link: LinkID, keyID: KeyID?, now: ProtocolTime,
                                      countFailure: Bool = true) -> [CarAction] {
        var tripped = false
        if countFailure, fault.countsTowardRateLimit {
            tripped = rateLimiter.recordFailure(admission.subject(of: link), now: now.monotonicMillis)
            // A link that failed gets no priority for handshake work any more.
            admission.markSpent(link)
        }
        let actions: [CarAction] = [.send(link, FaultMessage(fault).encoded()),
                                    .audit(AuditRecord(.rejected, link: link, keyID: keyID, fault: fault, now: now))]
        return tripped ? actions + dropBeforeSession(link) : actions
    }

    /// Forgets a link's handshake or pairing state (its challenge is spent) and closes it. An
    /// enrollment under way keeps its state: it completes without its PairingResult.
    mutating func dropBeforeSession(_ link: LinkID) -> [CarAction] {
        switch links[link] {
        case .established?: return []
        case .enrolling?: break
        case .challenged?, .pairing?:
            spendOutstandingChallenge(on: link)
            links[link] = nil
        case nil: break
        }
        admission.closed(link)
        return [.closeLink(link)]
    }
}

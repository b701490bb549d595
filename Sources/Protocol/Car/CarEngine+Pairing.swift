// Owner enrollment on the car side: the pairing window, PairingHello -> PairingChallenge,
// PairingProof -> `.enroll`, and the PairingResult once the agent has enrolled the key
// (docs/protocol.md section 18.6). The car is the SPAKE2+ verifier: it keeps w0 and L only.

extension CarProtocolEngine {
    /// Opens a pairing window (after a physical action: button, serial console) and returns
    /// the code to show. Replaces a window that is still open; its code dies. Check
    /// `Keychain.hasFreeSlot` first, or the enrollment will end with `keychainFull`.
    public mutating func openPairingWindow(now: ProtocolTime) throws(FaultCode) -> (code: PairingCode, actions: [CarAction]) {
        let code = try attempt(.internalError) { try PairingCode.generate(random) }
        let windowID = try attempt(.internalError) { try random.randomBytes(PairingWire.windowIDLength) }
        guard windowID.count == PairingWire.windowIDLength else { throw .internalError }
        var scalars = try attempt(.internalError) { try PairingSPAKE.scalars(code: code) }
        defer { ConstantTime.wipe(&scalars.w1) }
        let l = try attempt(.internalError) { try SPAKE2Plus.registrationRecord(w1: scalars.w1) }
        var actions = closePairingWindow(now: now)
        pairingWindow = PairingWindow(w0: scalars.w0, l: l, windowID: windowID,
                                      expiresAtMillis: now.monotonicMillis + configuration.pairing.windowMillis,
                                      wrongCodesLeft: configuration.pairing.maxWrongCodes)
        actions.append(.audit(AuditRecord(.pairingWindowOpened, link: .car, keyID: nil, now: now)))
        return (code, actions)
    }

    /// Closes the window early (cancelled on the console). Nothing happens when none is open.
    public mutating func closePairingWindow(now: ProtocolTime) -> [CarAction] {
        guard pairingWindow != nil else { return [] }
        pairingWindow = nil
        return [.audit(AuditRecord(.pairingWindowClosed, link: .car, keyID: nil, fault: .pairingClosed, now: now))]
    }

    public func isPairingWindowOpen(now: ProtocolTime) -> Bool {
        pairingWindow?.isOpen(at: now.monotonicMillis) ?? false
    }

    /// Finishes an enrollment announced by `.enroll`: `result` nil means the key is enrolled
    /// and persisted; otherwise the fault (`keychainFull`, `revoked`, `internalError`).
    /// Sends the PairingResult if the link is still there and audits either way.
    public mutating func completeEnrollment(_ token: CommandToken, result: FaultCode?, now: ProtocolTime) -> [CarAction] {
        guard let pending = pendingEnrollments.removeValue(forKey: token) else { return [] }
        var actions: [CarAction] = []
        if case .enrolling(let waiting)? = links[pending.link], waiting == token {
            links[pending.link] = nil
            let message: PairingResultMessage
            if result == nil, let success = try? PairingResultMessage.success(carMAC: pending.carMAC) {
                message = success
            } else {
                message = PairingResultMessage(result ?? .internalError)
            }
            actions.append(.send(pending.link, message.encoded()))
            // Section 18.12: the advertising key follows a successful PairingResult only.
            if message.isSuccess, let grant = pending.grant { actions.append(.send(pending.link, grant)) }
        }
        let event: AuditRecord.Event = result == nil ? .ownerEnrolled : .rejected
        actions.append(.audit(AuditRecord(event, link: pending.link, keyID: pending.keyID, fault: result, now: now)))
        return actions
    }

    /// P0 version: an old app's hello gets `pairingVersion` and changes nothing (no guess, no
    /// rate-limit failure). P1 window open, P2 link slot, P3 valid phone key and shareP, P4 key
    /// not revoked; then the window spends one guess and the car answers with its SPAKE2+ share
    /// and confirmV, signed by its identity key.
    mutating func handlePairingHello(_ hello: PairingHelloMessage, raw: Bytes, link: LinkID, now: ProtocolTime) -> [CarAction] {
        let claimed = (try? P256PublicKey(sec1: hello.phonePublicKey)).map { KeyID(publicKey: $0) }
        expiredPairings.removeValue(forKey: link)
        if let fault = hello.refusalOnSight {
            return rejectBeforeSession(fault, link: link, keyID: claimed, now: now, countFailure: false)
        }
        if case .pairing? = links[link],
           rateLimiter.recordFailure(admission.subject(of: link), now: now.monotonicMillis) {
            // The attempt this hello replaces was never confirmed (a phone with a wrong code
            // aborts on confirmV): it counts against the link like a wrong code (section 11).
            return rejectBeforeSession(.rateLimited, link: link, keyID: claimed, now: now, countFailure: false)
                + dropBeforeSession(link)
        }
        do throws(FaultCode) {
            guard var window = pairingWindow, window.isOpen(at: now.monotonicMillis) else { throw .pairingClosed }
            _ = try reserveSlot(for: link, keyID: nil, now: now)
            let phoneKey = try attempt(.malformedMessage) { try P256PublicKey(sec1: hello.phonePublicKey) }
            if let known = keys.lookup(KeyID(publicKey: phoneKey)), known.revoked { throw .revoked }
            let challenge = try attempt(.internalError) { try random.randomBytes(Wire.challengeLength) }
            guard challenge.count == Wire.challengeLength else { throw .internalError }
            let y = try attempt(.internalError) { try SPAKE2Plus.randomScalar(random) }
            let car = identity.publicKey.sec1
            let ids = PairingSPAKE.identities(phone: phoneKey.sec1, car: car, vehicleID: configuration.vehicleID,
                                              windowID: window.windowID)
            let shareV = try attempt(.internalError) { try SPAKE2Plus.verifierShare(y: y, w0: window.w0) }
            // A shareP off the curve, the identity, or one that cancels w0*M is malformed.
            let schedule = try attempt(.malformedMessage) {
                try SPAKE2Plus.verifierFinish(y: y, w0: window.w0, l: window.l, shareP: hello.shareP, shareV: shareV,
                                              identities: ids)
            }
            let message = try attempt(.internalError) {
                try PairingChallengeMessage.sign(by: identity, context: raw) { signature throws(MessageFormatError) in
                    try PairingChallengeMessage(challenge: challenge, windowID: window.windowID, carIdentityPublicKey: car,
                                                vehicleID: configuration.vehicleID, shareV: shareV, confirmV: schedule.confirmV,
                                                signature: signature)
                }.encoded()
            }
            // The guess is spent now, not at the proof: confirmV lets whoever chose shareP test
            // exactly one code (the one its shareP was built with), offline, without answering.
            window.wrongCodesLeft -= 1
            pairingWindow = window
            spendOutstandingChallenge(on: link)
            let run = PairingAttempt(windowID: window.windowID, challengeBytes: message,
                                     expectedConfirmP: schedule.confirmP, kShared: schedule.kShared)
            links[link] = .pairing(PendingPairing(helloBytes: raw, phoneKey: phoneKey, challenge: challenge,
                                                  issuedAtMillis: now.monotonicMillis, attempt: run))
            return [.send(link, message)]
        } catch {
            return rejectBeforeSession(error, link: link, keyID: claimed, now: now)
        }
    }

    /// Q1 a PairingChallenge outstanding on this link (consumed now, whatever follows),
    /// Q2 answered within the challenge lifetime, Q3 the same window still open, Q4 possession
    /// signature, Q5 confirmP (constant time). The guess was spent with the PairingChallenge;
    /// a wrong confirmP when none is left closes the window.
    mutating func handlePairingProof(_ proof: PairingProofMessage, link: LinkID, now: ProtocolTime) -> [CarAction] {
        sweepExpiredChallenges(now: now)
        guard case .pairing(let pending)? = links[link] else {
            // An attempt of this link that expired unanswered is still rule Q2 until the link
            // ends: the answer must not depend on when the sweep ran.
            if links[link] == nil, let expired = expiredPairings[link] {
                return rejectBeforeSession(.challengeExpired, link: link, keyID: expired, now: now)
            }
            return rejectBeforeSession(.unexpectedMessage, link: link, keyID: pendingKeyID(link), now: now)
        }
        links[link] = nil
        usedChallenges.insert(pending.challenge)
        let keyID = KeyID(publicKey: pending.phoneKey)
        var extra: [CarAction] = []
        let phone = pending.phoneKey.sec1, car = identity.publicKey.sec1
        do throws(FaultCode) {
            guard now.monotonicMillis <= pending.issuedAtMillis + configuration.challengeLifetimeMillis else {
                throw .challengeExpired
            }
            guard let window = pairingWindow, window.windowID == pending.attempt.windowID,
                  window.acceptsProof(at: now.monotonicMillis) else { throw .pairingClosed }
            let possession = PairingSPAKE.possessionInput(pairingHello: pending.helloBytes,
                                                          pairingChallenge: pending.attempt.challengeBytes,
                                                          confirmP: proof.confirmP)
            guard let signature = try? ECDSASignature(rawRepresentation: proof.signature),
                  pending.phoneKey.isValidSignature(signature, for: possession) else { throw .badSignature }
            guard SPAKE2Plus.isValidConfirmation(proof.confirmP, expected: pending.attempt.expectedConfirmP) else {
                if window.wrongCodesLeft <= 0 {
                    pairingWindow = nil
                    extra.append(.audit(AuditRecord(.pairingWindowClosed, link: link, keyID: keyID,
                                                    fault: .wrongPairingCode, now: now)))
                }
                throw .wrongPairingCode
            }
            // Single use: the window closes now; only the MAC under K_shared survives it.
            let carMAC = PairingSPAKE.resultMAC(kShared: pending.attempt.kShared, phone: phone, car: car,
                                                challenge: pending.challenge)
            pairingWindow = nil
            let token = CommandToken(nextToken)
            nextToken += 1
            let grant = advertisingKeyGrant(phone: pending.phoneKey, challenge: pending.challenge)
            pendingEnrollments[token] = PendingEnrollment(link: link, keyID: keyID, carMAC: carMAC, grant: grant)
            links[link] = .enrolling(token)
            rateLimiter.recordSuccess(admission.subject(of: link), now: now.monotonicMillis)
            return [.audit(AuditRecord(.pairingWindowClosed, link: link, keyID: keyID, now: now)),
                    .enroll(EnrollmentRequest(token: token, link: link, publicKey: pending.phoneKey))]
        } catch {
            return rejectBeforeSession(error, link: link, keyID: keyID, now: now) + extra
        }
    }

    /// The AdvertisingKeyGrant for `phone`, keyed by ECDH(car identity, phone key) and salted
    /// with this enrollment's challenge (section 18.12). nil without an advertising key, or
    /// when the identity key cannot do ECDH (then the phone enrolls without the key).
    func advertisingKeyGrant(phone: P256PublicKey, challenge: Bytes) -> Bytes? {
        guard let key = configuration.advertisingKey, let agreement = identity as? any ProtocolKeyAgreement,
              var shared = try? agreement.sharedSecret(with: phone) else { return nil }
        defer { ConstantTime.wipe(&shared) }
        return try? AdvertisingKeyGrantMessage.seal(key, sharedSecret: shared, challenge: challenge,
                                                    carIdentity: identity.publicKey.sec1, phone: phone.sec1).encoded()
    }

    /// Housekeeping for `tick`: audits a window that ran out, or that has no guess left and no
    /// attempt still waiting for its proof (the phone of a wrong code sends none: it aborts on
    /// the car's confirmV, RFC 9383 section 3.4).
    mutating func expirePairingWindow(now: ProtocolTime) -> [CarAction] {
        guard let window = pairingWindow else { return [] }
        if !window.acceptsProof(at: now.monotonicMillis) {
            pairingWindow = nil
            return [.audit(AuditRecord(.pairingWindowClosed, link: .car, keyID: nil, fault: .pairingClosed, now: now))]
        }
        let waiting = links.values.contains { state in
            if case .pairing(let pending) = state { return pending.attempt.windowID == window.windowID }
            return false
        }
        guard window.wrongCodesLeft <= 0, !waiting else { return [] }
        pairingWindow = nil
        return [.audit(AuditRecord(.pairingWindowClosed, link: .car, keyID: nil, fault: .wrongPairingCode, now: now))]
    }
}

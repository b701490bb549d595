// Hello -> Challenge and AuthResponse -> SessionAccepted on the car side.

extension CarProtocolEngine {
    mutating func handleHello(_ hello: HelloMessage, raw: Bytes, link: LinkID, now: ProtocolTime) -> [CarAction] {
        admission.helloArrived(on: link)
        // A pairing attempt of this link that expired is over: the link has moved on.
        expiredPairings.removeValue(forKey: link)
        do throws(FaultCode) {
            // H1: a slot, possibly a shared-key session's that an owner's Hello ends.
            let victim = try reserveSlot(for: link, keyID: hello.keyID, now: now)
            // H2: the handshake budget, before any crypto (a certificate costs a verification
            // too). A Hello for an unknown key without certificate costs nothing: no budget.
            if keys.lookup(hello.keyID) != nil || !hello.shareCertificate.isEmpty {
                try chargeHandshake(link, now: now)
            }
            // Refuse unknown, revoked and out-of-window keys before spending a signature on them.
            let (record, certificate) = try resolveKey(hello, now: now)
            try AccessPolicy.checkUsable(record, now: now)
            let phoneEphemeral = try attempt(.malformedMessage) { try P256PublicKey(sec1: hello.ephemeralPublicKey) }
            let challenge = try attempt(.internalError) { try random.randomBytes(Wire.challengeLength) }
            guard challenge.count == Wire.challengeLength else { throw .internalError }
            let carEphemeral = try attempt(.internalError) { try ephemeralKeys.makeEphemeralKey() }
            let challengeBytes = try attempt(.internalError) {
                try ChallengeMessage.sign(by: identity, context: raw) { signature throws(MessageFormatError) in
                    try ChallengeMessage(challenge: challenge, carEphemeralPublicKey: carEphemeral.publicKey.sec1,
                                         vehicleID: configuration.vehicleID, signature: signature)
                }.encoded()
            }

            // Only now, with a Challenge to send, does an owner's Hello end a share's session.
            var actions: [CarAction] = []
            if let victim, case .established(let session)? = links[victim] {
                actions += closeSession(victim, session: session, reason: .busy, now: now)
            }
            // A new Hello on a challenged (or pairing) link replaces the old handshake; its
            // challenge is spent.
            spendOutstandingChallenge(on: link)
            links[link] = .challenged(PendingHandshake(
                helloBytes: raw, keyID: hello.keyID, record: record, certificate: certificate,
                phoneEphemeral: phoneEphemeral, carEphemeral: carEphemeral, challenge: challenge,
                challengeBytes: challengeBytes, issuedAtMillis: now.monotonicMillis))
            admission.markSpent(link)
            return actions + [.send(link, challengeBytes)]
        } catch {
            return rejectBeforeSession(error, link: link, keyID: hello.keyID, now: now)
        }
    }

    mutating func handleAuthResponse(_ response: AuthResponseMessage, raw: Bytes, link: LinkID, now: ProtocolTime) -> [CarAction] {
        sweepExpiredChallenges(now: now)
        guard case .challenged(let pending)? = links[link],
              ConstantTime.equals(pending.challenge, response.challenge) else {
            // Not this link's outstanding challenge: nothing is consumed. A challenge of this
            // link that expired (swept just above, if `tick` had not) is still rule A3; one that
            // expired on another link is reusedChallenge there, whenever the sweep ran.
            if let expired = usedChallenges.expiry(of: response.challenge), expired.link == link {
                return rejectBeforeSession(.challengeExpired, link: link, keyID: expired.keyID, now: now)
            }
            let fault: FaultCode = usedChallenges.contains(response.challenge) ? .reusedChallenge : .unknownChallenge
            return rejectBeforeSession(fault, link: link, keyID: pendingKeyID(link), now: now)
        }
        // Single use from here on, whatever the outcome: the ephemeral key dies with `pending`.
        links[link] = nil
        usedChallenges.insert(pending.challenge)

        do throws(FaultCode) {
            guard !isExpired(pending, now: now) else { throw .challengeExpired }
            let signature = try attempt(.badSignature) {
                try ECDSASignature(response.signature, encoding: response.signatureEncoding)
            }
            guard pending.record.publicKey.isValidSignature(signature, for: response.signedData) else { throw .badSignature }
            if now.wallClockTrusted {
                let skew = Int64(response.timestamp) - now.wallSeconds
                guard abs(skew) <= configuration.timestampToleranceSeconds else { throw .staleTimestamp }
            }
            // The directory may have changed since Hello (revocation, removal).
            let record = try currentRecord(pending.keyID, snapshot: pending.record, certificate: pending.certificate, now: now)
            try AccessPolicy.checkUsable(record, now: now)
            let keys = try attempt(.internalError) {
                try KeySchedule.deriveKeys(ephemeral: pending.carEphemeral, peer: pending.phoneEphemeral,
                                           challenge: pending.challenge, hello: pending.helloBytes,
                                           challengeMessage: pending.challengeBytes, authResponse: raw)
            }
            return try establish(link: link, pending: pending, record: record, keys: keys,
                                 timestamp: response.timestamp, now: now)
        } catch {
            return rejectBeforeSession(error, link: link, keyID: pending.keyID, now: now)
        }
    }

    private mutating func establish(link: LinkID, pending: PendingHandshake, record: KeyRecord,
                                    keys: SessionKeys, timestamp: UInt32, now: ProtocolTime) throws(FaultCode) -> [CarAction] {
        var channel = SessionChannel(keys: keys, isCar: true, nextSendCounter: 0, lastReceivedCounter: 0,
                                     sendLimit: configuration.maxRecordCounter)
        let carTime = now.wallSeconds32
        let accepted = SessionAcceptedBody(role: record.role, permissions: record.permissions,
                                           notBefore: record.notBefore, notAfter: record.notAfter,
                                           carTime: carTime, clockTrusted: now.wallClockTrusted,
                                           sessionLifetime: configuration.sessionLifetimeSeconds)
        let bytes = try channel.seal(.sessionAccepted, accepted.encoded())
        links[link] = .established(CarSession(
            keyID: pending.keyID, record: record, certificate: pending.certificate, channel: channel,
            establishedAtMillis: now.monotonicMillis,
            lifetimeMillis: UInt64(configuration.sessionLifetimeSeconds) * 1000,
            carTimeAtAccept: carTime, inFlight: nil, rangingKey: keys.ranging))
        rateLimiter.recordSuccess(admission.subject(of: link), now: now.monotonicMillis)
        // One session per key: a phone that reconnects (or a copied key) ends the older one.
        var ended: [CarAction] = []
        for (other, state) in links.sorted(by: { $0.key.rawValue < $1.key.rawValue }) where other != link {
            if case .established(let older) = state, older.keyID == pending.keyID {
                ended += closeSession(other, session: older, reason: .busy, now: now)
            }
        }
        let grant = AccessGrant(link: link, keyID: pending.keyID, record: record,
                                presentedCertificate: pending.certificate,
                                sessionLifetimeSeconds: configuration.sessionLifetimeSeconds,
                                phoneTimestamp: timestamp)
        return ended + [.send(link, bytes), .authenticated(grant),
                        .audit(AuditRecord(.sessionEstablished, link: link, keyID: pending.keyID, now: now))]
    }

    /// The directory's record wins. A share-certificate key not yet remembered is only as good
    /// as its certificate now: it is verified again (a revoked serial, holder or issuer since
    /// the Hello refuses it even if the termination was missed), and must still grant the same
    /// record. A directory entry with a different public key is not this key.
    func currentRecord(_ keyID: KeyID, snapshot: KeyRecord, certificate: Bytes?, now: ProtocolTime) throws(FaultCode) -> KeyRecord {
        if let record = keys.lookup(keyID) {
            guard record.publicKey == snapshot.publicKey else { throw .unknownKey }
            return record
        }
        guard let certificate else { throw .unknownKey }
        guard let verifier = certificateVerifier else { throw .invalidCertificate }
        let record = try verifier.verify(certificate: certificate, keyID: keyID, vehicleID: configuration.vehicleID, now: now)
        guard record == snapshot else { throw .invalidCertificate }
        return record
    }

    /// Enrolled keys come from the directory; unknown ones only with a share certificate.
    private func resolveKey(_ hello: HelloMessage, now: ProtocolTime) throws(FaultCode) -> (KeyRecord, Bytes?) {
        if let record = keys.lookup(hello.keyID) {
            guard record.keyID == hello.keyID else { throw .unknownKey }
            return (record, nil)
        }
        guard !hello.shareCertificate.isEmpty else { throw .unknownKey }
        guard let verifier = certificateVerifier else { throw .invalidCertificate }
        let record = try verifier.verify(certificate: hello.shareCertificate, keyID: hello.keyID,
                                         vehicleID: configuration.vehicleID, now: now)
        // A certificate can only create a shared key, and only for the key named in Hello.
        guard record.keyID == hello.keyID, record.role == .shared else { throw .invalidCertificate }
        return (record, hello.shareCertificate)
    }

    /// A link keeps its slot; a new link needs a free one. Expired handshakes are freed first.
    /// When the table is still full, a Hello naming an enrolled owner key gets the slot of the
    /// oldest shared-key session (returned: it is ended once the Challenge is ready), so
    /// guests can never keep the owner out. Anyone can name the owner's key ID, but what that
    /// costs a guest is bounded by the handshake budget.
    mutating func reserveSlot(for link: LinkID, keyID: KeyID?, now: ProtocolTime) throws(FaultCode) -> LinkID? {
        guard links[link] == nil, links.count >= configuration.maxLinks else { return nil }
        for (other, state) in links {
            if case .challenged(let pending) = state, isExpired(pending, now: now) {
                links[other] = nil
                // As in tick(): a late answer on that link is still challengeExpired (A3).
                usedChallenges.insert(pending.challenge, expiredOn: other, keyID: pending.keyID)
            }
        }
        guard links.count >= configuration.maxLinks else { return nil }
        guard let keyID, keys.lookup(keyID)?.role == .owner else { throw .busy }
        let shares = links.compactMap { entry -> (LinkID, UInt64)? in
            guard case .established(let session) = entry.value, session.record.role == .shared else { return nil }
            return (entry.key, session.establishedAtMillis)
        }
        guard let oldest = shares.min(by: { ($0.1, $0.0.rawValue) < ($1.1, $1.0.rawValue) }) else { throw .busy }
        return oldest.0
    }

    /// Rule H2: one unit of handshake work from the peer's and the car's budget, or `busy`
    /// (not counted as a failure). A link already challenged, or a peer that has failed,
    /// does not compete with fresh links for the last half of the car-wide budget.
    mutating func chargeHandshake(_ link: LinkID, now: ProtocolTime) throws(FaultCode) {
        let fresh = admission.isFresh(link) && !rateLimiter.hasHistory(admission.subject(of: link))
        guard admission.admit(link, fresh: fresh, now: now.monotonicMillis) else { throw .busy }
    }
}

extension CarProtocolEngine {
    /// Marks the link's outstanding handshake or pairing challenge as used.
    mutating func spendOutstandingChallenge(on link: LinkID) {
        switch links[link] {
        case .challenged(let old)?: usedChallenges.insert(old.challenge)
        case .pairing(let old)?: usedChallenges.insert(old.challenge)
        default: break
        }
    }
}

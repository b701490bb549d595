// Hello -> Challenge and AuthResponse -> SessionAccepted on the car side.

extension CarProtocolEngine {
    mutating func handleHello(_ hello: HelloMessage, raw: Bytes, link: LinkID, now: ProtocolTime) -> [CarAction] {
        do throws(FaultCode) {
            try reserveSlot(for: link, now: now)
            // Refuse unknown, revoked and out-of-window keys before spending a signature on them.
            let (record, certificate) = try resolveKey(hello, now: now)
            try AccessPolicy.checkUsable(record, now: now)
            let phoneEphemeral = try attempt(.malformedMessage) { try P256PublicKey(sec1: hello.ephemeralPublicKey) }
            let challenge = try attempt(.internalError) { try random.randomBytes(Wire.challengeLength) }
            guard challenge.count == Wire.challengeLength else { throw .internalError }
            let carEphemeral = try attempt(.internalError) { try ephemeralKeys.makeEphemeralKey() }
            let body = ChallengeMessage.body(challenge: challenge, carEphemeralPublicKey: carEphemeral.publicKey.sec1,
                                             vehicleID: configuration.vehicleID)
            let input = ChallengeMessage.signatureInput(hello: raw, body: body)
            let signature = try attempt(.internalError) { try identity.signature(for: input) }
            let challengeBytes = body + signature.rawRepresentation

            // A new Hello on a challenged (or pairing) link replaces the old handshake; its
            // challenge is spent.
            spendOutstandingChallenge(on: link)
            links[link] = .challenged(PendingHandshake(
                helloBytes: raw, keyID: hello.keyID, record: record, certificate: certificate,
                phoneEphemeral: phoneEphemeral, carEphemeral: carEphemeral, challenge: challenge,
                challengeBytes: challengeBytes, issuedAtMillis: now.monotonicMillis))
            return [.send(link, challengeBytes)]
        } catch {
            return rejectBeforeSession(error, link: link, keyID: hello.keyID, now: now)
        }
    }

    mutating func handleAuthResponse(_ response: AuthResponseMessage, raw: Bytes, link: LinkID, now: ProtocolTime) -> [CarAction] {
        guard case .challenged(let pending)? = links[link],
              ConstantTime.equals(pending.challenge, response.challenge) else {
            // Not this link's outstanding challenge: nothing is consumed. A challenge of this
            // link that expired and was swept by `tick` is still rule A3: the answer must not
            // depend on whether the sweep ran before the AuthResponse arrived.
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
        rateLimiter.recordSuccess(link, now: now.monotonicMillis)
        let grant = AccessGrant(link: link, keyID: pending.keyID, record: record,
                                presentedCertificate: pending.certificate,
                                sessionLifetimeSeconds: configuration.sessionLifetimeSeconds,
                                phoneTimestamp: timestamp)
        return [.send(link, bytes), .authenticated(grant),
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
    mutating func reserveSlot(for link: LinkID, now: ProtocolTime) throws(FaultCode) {
        guard links[link] == nil, links.count >= configuration.maxLinks else { return }
        for (other, state) in links {
            if case .challenged(let pending) = state, isExpired(pending, now: now) {
                links[other] = nil
                usedChallenges.insert(pending.challenge)
            }
        }
        guard links.count < configuration.maxLinks else { throw .busy }
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

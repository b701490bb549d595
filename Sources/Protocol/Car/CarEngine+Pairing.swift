// Owner enrollment on the car side: the pairing window, PairingHello -> PairingChallenge,
// PairingProof -> `.enroll`, and the PairingResult once the agent has enrolled the key
// (docs/protocol.md section 18.6).

extension CarProtocolEngine {
    /// Opens a pairing window (after a physical action: button, serial console) and returns
    /// the code to show. Replaces a window that is still open; its code dies. Check
    /// `Keychain.hasFreeSlot` first, or the enrollment will end with `keychainFull`.
    public mutating func openPairingWindow(now: ProtocolTime) throws(FaultCode) -> (code: PairingCode, actions: [CarAction]) {
        let code = try attempt(.internalError) { try PairingCode.generate(random) }
        var actions = closePairingWindow(now: now)
        pairingWindow = PairingWindow(code: code, expiresAtMillis: now.monotonicMillis + configuration.pairing.windowMillis,
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

    /// P1 window open, P2 link slot, P3 valid phone key, P4 key not revoked, then a signed
    /// PairingChallenge.
    mutating func handlePairingHello(_ hello: PairingHelloMessage, raw: Bytes, link: LinkID, now: ProtocolTime) -> [CarAction] {
        let claimed = (try? P256PublicKey(sec1: hello.phonePublicKey)).map { KeyID(publicKey: $0) }
        do throws(FaultCode) {
            guard isPairingWindowOpen(now: now) else { throw .pairingClosed }
            _ = try reserveSlot(for: link, keyID: nil, now: now)
            let phoneKey = try attempt(.malformedMessage) { try P256PublicKey(sec1: hello.phonePublicKey) }
            if let known = keys.lookup(KeyID(publicKey: phoneKey)), known.revoked { throw .revoked }
            let challenge = try attempt(.internalError) { try random.randomBytes(Wire.challengeLength) }
            guard challenge.count == Wire.challengeLength else { throw .internalError }
            let body = PairingChallengeMessage.body(challenge: challenge, carIdentityPublicKey: identity.publicKey.sec1,
                                                    vehicleID: configuration.vehicleID)
            let input = PairingChallengeMessage.signatureInput(pairingHello: raw, body: body)
            let signature = try attempt(.internalError) { try identity.signature(for: input) }
            spendOutstandingChallenge(on: link)
            links[link] = .pairing(PendingPairing(helloBytes: raw, phoneKey: phoneKey, challenge: challenge,
                                                  issuedAtMillis: now.monotonicMillis))
            return [.send(link, body + signature.rawRepresentation)]
        } catch {
            return rejectBeforeSession(error, link: link, keyID: claimed, now: now)
        }
    }

    /// Q1 a PairingChallenge outstanding on this link (consumed now, whatever follows),
    /// Q2 answered within the challenge lifetime, Q3 window still open, Q4 possession
    /// signature, Q5 code MAC (a wrong one costs the window one of its attempts). A proof
    /// refused at Q2 or Q4 whose code MAC is right closes the window (the code is exposed).
    mutating func handlePairingProof(_ proof: PairingProofMessage, link: LinkID, now: ProtocolTime) -> [CarAction] {
        guard case .pairing(let pending)? = links[link] else {
            return rejectBeforeSession(.unexpectedMessage, link: link, keyID: pendingKeyID(link), now: now)
        }
        links[link] = nil
        usedChallenges.insert(pending.challenge)
        let keyID = KeyID(publicKey: pending.phoneKey)
        var extra: [CarAction] = []
        let phone = pending.phoneKey.sec1, car = identity.publicKey.sec1
        // The code MAC travels in the clear with all its inputs, so a correct one gives the code
        // to any listener (offline search over 10^6 codes). Whatever else is wrong with this
        // proof, a correct code MAC closes the open window.
        let exposesCode = pairingWindow.map { window in
            window.isOpen(at: now.monotonicMillis) && ConstantTime.equals(
                PairingProofs.phoneMAC(code: window.code, phone: phone, car: car, challenge: pending.challenge), proof.codeMAC)
        } ?? false
        do throws(FaultCode) {
            guard now.monotonicMillis <= pending.issuedAtMillis + configuration.challengeLifetimeMillis else {
                throw .challengeExpired
            }
            guard var window = pairingWindow, window.isOpen(at: now.monotonicMillis) else { throw .pairingClosed }
            let possession = PairingProofs.possessionInput(phone: phone, car: car, challenge: pending.challenge)
            guard let signature = try? ECDSASignature(rawRepresentation: proof.signature),
                  pending.phoneKey.isValidSignature(signature, for: possession) else { throw .badSignature }
            guard exposesCode else {
                window.wrongCodesLeft -= 1
                if window.wrongCodesLeft > 0 {
                    pairingWindow = window
                } else {
                    pairingWindow = nil
                    extra.append(.audit(AuditRecord(.pairingWindowClosed, link: link, keyID: keyID,
                                                    fault: .wrongPairingCode, now: now)))
                }
                throw .wrongPairingCode
            }
            // Single use: the window closes now; only the car's MAC survives the code.
            let carMAC = PairingProofs.carMAC(code: window.code, phone: phone, car: car, challenge: pending.challenge)
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
            if exposesCode, pairingWindow != nil {
                pairingWindow = nil
                extra.append(.audit(AuditRecord(.pairingWindowClosed, link: link, keyID: keyID, fault: error, now: now)))
            }
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

    /// Housekeeping for `tick`: audits a window that ran out.
    mutating func expirePairingWindow(now: ProtocolTime) -> [CarAction] {
        guard let window = pairingWindow, !window.isOpen(at: now.monotonicMillis) else { return [] }
        pairingWindow = nil
        return [.audit(AuditRecord(.pairingWindowClosed, link: .car, keyID: nil, fault: .pairingClosed, now: now))]
    }
}

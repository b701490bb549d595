// Which rules a message exercises, in the order the car checks them (docs/protocol.md 11 and
// 18.6), which of them a refusal names, and what to tell the app team about it.

extension ConformanceObserver {
    /// The rules the car checks for `sent` in `phase`, in its order: a refusal by one means the
    /// ones before it passed and the ones after it were never reached.
    func checkOrder(for sent: Sent, phase: Phase) -> [ConformanceRule] {
        switch phase {
        case .established:
            switch sent {
            case .command:
                return [.sessionLifetime, .sessionRateLimit, .sessionMessage, .decryption, .counter, .plaintext,
                        .oneCommand, .keyInSession, .permission, .expiry]
            case .undecodable: return [.sessionLifetime, .sessionRateLimit, .decode]
            default: return [.sessionLifetime, .sessionRateLimit, .decode, .sessionMessage]
            }
        case .enrolling:
            return [.decode, .order]
        case .idle, .challenged, .pairing:
            switch sent {
            case .undecodable: return [.rateLimit, .decode]
            case .hello(let hello):
                return [.rateLimit, .decode, .order, .slot, .helloRate, hello.shareCertificate.isEmpty ? .key : .certificate,
                        .keyUsable, .ephemeralKey]
            case .authResponse:
                return [.rateLimit, .decode, .order, .challenge, .challengeLifetime, .signature, .timestamp, .keyAgain]
            case .pairingHello:
                return [.rateLimit, .decode, .pairingVersion, .pairingWindow, .slot, .pairingHello, .keyUsable]
            case .pairingProof:
                return [.rateLimit, .decode, .pairingOrder, .pairingLate, .pairingWindow, .pairingSignature, .pairingCode]
            case .command, .carMessage:
                return [.rateLimit, .decode, .order]
            }
        }
    }

    /// Whether a step the car passed counts in the checklist: the car's own conditions are not
    /// the phone's to pass, the observer counts its own rules itself, and the timestamp is
    /// only checked on a trusted clock (rule A5).
    func countsAsPassed(_ rule: ConformanceRule, now: ProtocolTime) -> Bool {
        guard rule.kind != .car else { return false }
        switch rule {
        case .helloRate, .oneHello, .counterSequence: return false
        case .timestamp: return now.wallClockTrusted
        default: return true
        }
    }

    /// The rule behind the car's refusal `fault` of `sent`.
    func failingRule(_ fault: FaultCode, sent: Sent, phase: Phase, helloRateExceeded: Bool = false) -> ConformanceRule {
        var inSession = false
        if case .established = phase { inSession = true }
        var isAuthResponse = false, isProof = false, isHello = false
        switch sent {
        case .authResponse: isAuthResponse = true
        case .pairingProof: isProof = true
        case .hello: isHello = true
        default: break
        }
        switch fault {
        case .rateLimited: return inSession ? .sessionRateLimit : .rateLimit
        case .malformedMessage, .unsupportedVersion:
            switch sent {
            case .undecodable: return .decode
            case .hello: return .ephemeralKey
            case .pairingHello: return .pairingHello
            case .command: return inSession ? .plaintext : .order
            default: return .decode
            }
        case .unexpectedMessage:
            if isProof { return .pairingOrder }
            return inSession ? .sessionMessage : .order
        case .busy:
            if inSession { return .oneCommand }
            if phase == .enrolling { return .order }
            return isHello && helloRateExceeded ? .helloRate : .slot
        case .unknownKey:
            return inSession ? .keyInSession : isAuthResponse ? .keyAgain : .key
        case .revoked, .expired, .notYetValid, .clockNotTrusted:
            return inSession ? .keyInSession : isAuthResponse ? .keyAgain : .keyUsable
        case .invalidCertificate: return .certificate
        case .wrongVehicle: return inSession ? .revocation : .certificate
        case .invalidRevocation: return .revocation
        case .unknownChallenge, .reusedChallenge: return .challenge
        case .challengeExpired: return isProof ? .pairingLate : .challengeLifetime
        case .badSignature: return isProof ? .pairingSignature : .signature
        case .staleTimestamp: return .timestamp
        case .replayedCounter, .outOfOrderCounter: return .counter
        case .decryptionFailed: return .decryption
        case .sessionExpired: return .sessionLifetime
        case .insufficientPermission: return .permission
        case .expiredCommand, .lifetimeTooLong: return .expiry
        case .rangingUnsupported: return configuration.uwb == nil ? .carCondition : .ranging
        case .pairingClosed: return .pairingWindow
        case .wrongPairingCode: return .pairingCode
        case .pairingVersion: return .pairingVersion
        case .keychainFull, .internalError: return .carCondition
        case .lastOwnerKey, .actuationFailed, .notInProximity, .rangingFailed: return .outcome
        }
    }

    /// What to tell the app team about a refusal by `rule`.
    func detail(_ rule: ConformanceRule, _ fault: FaultCode, sent: Sent, record: LinkRecord, now: ProtocolTime) -> String {
        let lifetime = configuration.challengeLifetimeMillis
        switch rule {
        case .decode:
            if case .undecodable(let error) = sent { return "the message does not decode: \(error)" }
            return "the message does not decode"
        case .order:
            if record.phase == .enrolling { return "a message while the car enrolls this key: wait for the PairingResult" }
            return "a \(Self.name(of: sent)) before any session: the order is Hello, Challenge, AuthResponse, SessionAccepted"
        case .sessionMessage:
            return "a \(Self.name(of: sent)) inside a session: only Command records are allowed (a new handshake needs a new connection)"
        case .rateLimit, .sessionRateLimit:
            let policy = configuration.rateLimit
            return "this peer is blocked after \(policy.failureThreshold) failures within \(policy.windowMillis) ms: "
                + "wait \(policy.basePenaltyMillis) ms (doubling up to \(policy.maxPenaltyMillis) ms) before trying again"
        case .slot:
            return "the car has no free link slot or handshake budget now: retry after a pause"
        case .helloRate:
            let budget = configuration.handshakeBudgetPerPeer
            return "Hellos of this key faster than the handshake budget (\(budget.perSecond) a second after a burst of \(budget.burst))"
        case .key:
            return "key \(record.report.keyID?.description ?? "-") is not enrolled in this car and no share certificate was presented"
        case .keyUsable, .keyAgain, .keyInSession:
            let why: String
            switch fault {
            case .revoked: why = "revoked"
            case .expired: why = "past its validity window"
            case .notYetValid: why = "before its validity window"
            case .clockNotTrusted: why = "time-limited and the car has no trusted time"
            default: why = "no longer enrolled"
            }
            let when = rule == .keyAgain ? " at the AuthResponse" : rule == .keyInSession ? " at this command: the session ends" : ""
            return "the key is \(why)\(when)"
        case .ephemeralKey:
            return "the Hello's ephemeral key is not a valid P-256 point (65 bytes, 04 || X || Y, on the curve)"
        case .certificate:
            return "the share certificate in the Hello is not valid for this car and key (\(fault.name))"
        case .challenge:
            return challengeDetail(fault, sent: sent, record: record)
        case .challengeLifetime:
            if case .challenged(let issued) = record.phase {
                return "AuthResponse \(now.monotonicMillis &- issued) ms after its Challenge; the challenge lifetime is \(lifetime) ms"
            }
            return "AuthResponse for a Challenge that expired unanswered; the challenge lifetime is \(lifetime) ms"
        case .signature:
            guard case .authResponse(let response) = sent else { return "the signature does not verify" }
            let encoding = response.signature.count == Wire.rawSignatureLength
                ? "a \(Wire.rawSignatureLength)-byte field is read as raw r || s (a DER signature of that length must be made again)"
                : "a \(response.signature.count)-byte DER signature"
            return "the signature does not verify with the enrolled key over challenge || timestamp (little-endian), "
                + "ECDSA-SHA256 of those \(Wire.challengeLength + 4) bytes; \(encoding)"
        case .timestamp:
            guard case .authResponse(let response) = sent else { return "the timestamp is off the car's trusted clock" }
            let skew = Int64(response.timestamp) - now.wallSeconds
            var text = "timestamp \(response.timestamp) is \(skew) s off the car's trusted clock; the tolerance is "
                + "\(configuration.timestampToleranceSeconds) s"
            if abs(Int64(response.timestamp.byteSwapped) - now.wallSeconds) <= configuration.timestampToleranceSeconds {
                text += "; read big-endian it would be right: the timestamp is little-endian"
            }
            return text
        case .sessionLifetime:
            return "a message after the session lifetime of \(configuration.sessionLifetimeSeconds) s: start a new handshake"
        case .decryption:
            return "Command \(Self.counterText(sent)) does not decrypt: check the phone-to-car key, the nonce "
                + "(direction 01, three zero bytes, the counter) and the header as associated data"
        case .counter:
            if fault == .replayedCounter {
                return "Command \(Self.counterText(sent)) repeats the last accepted counter: every Command, also a repeated one, needs a new counter"
            }
            return "Command \(Self.counterText(sent)) is below the last accepted counter \(record.lastCounter)"
        case .plaintext:
            return "Command \(Self.counterText(sent)) decrypted, but its plaintext or arguments do not decode"
        case .oneCommand:
            return "a Command while the previous one had no Response yet: send one at a time"
        case .permission:
            return "the key lacks this command's permission (SessionAccepted lists the key's permissions)"
        case .expiry:
            if fault == .lifetimeTooLong {
                return "expiresAt is more than \(configuration.maxCommandLifetimeSeconds) s ahead of the car's session clock"
            }
            return "expiresAt is before the car's session clock: compute it from SessionAccepted's carTime "
                + "plus the whole seconds since it arrived, plus the lifetime"
        case .revocation:
            return "the revoke command's revocation does not verify (\(fault.name))"
        case .ranging:
            return "the RangingSetup is outside the values of protocol.md 19.2, or reuses a session ID of this session"
        case .pairingVersion:
            return "a version 1 PairingHello: the car pairs with SPAKE2+ (pairing version 2) only"
        case .pairingWindow:
            return "no pairing window is open (it lasts \(configuration.pairing.windowMillis) ms after the car opens it)"
        case .pairingHello:
            return "the PairingHello's phone key or shareP is not a valid point"
        case .pairingOrder:
            return "a PairingProof without a PairingChallenge outstanding on this link"
        case .pairingLate:
            if case .pairing(let issued) = record.phase {
                return "PairingProof \(now.monotonicMillis &- issued) ms after its PairingChallenge; the lifetime is \(lifetime) ms"
            }
            return "PairingProof for a PairingChallenge that expired unanswered; the lifetime is \(lifetime) ms"
        case .pairingSignature:
            return "the PairingProof signature does not verify with the PairingHello's phone key"
        case .pairingCode:
            return "the pairing code does not match the one the car shows"
        case .carCondition, .outcome:
            return "the car could not serve it (\(fault.name))"
        case .framing, .handshakeDeadline, .backlog, .oneHello, .counterSequence:
            return fault.name
        }
    }

    /// Rule A1 in the phone's terms: which Challenge the AuthResponse named.
    private func challengeDetail(_ fault: FaultCode, sent: Sent, record: LinkRecord) -> String {
        guard case .authResponse(let response) = sent else { return "not this link's outstanding Challenge" }
        guard !record.challenges.isEmpty else {
            return "AuthResponse before any Challenge on this link: send a Hello and answer its Challenge"
        }
        if let index = record.challenges.lastIndex(of: response.challenge) {
            if index == record.challenges.count - 1 {
                return "a second AuthResponse for the same Challenge: each Challenge is answered once"
            }
            return "AuthResponse to an earlier Challenge that a later Hello on this link replaced"
        }
        return fault == .reusedChallenge
            ? "AuthResponse naming a Challenge already used on another link"
            : "AuthResponse naming a Challenge this link was never given"
    }

    static func name(of sent: Sent) -> String {
        switch sent {
        case .undecodable: return "message that does not decode"
        case .hello: return "Hello"
        case .authResponse: return "AuthResponse"
        case .command: return "Command record"
        case .pairingHello: return "PairingHello"
        case .pairingProof: return "PairingProof"
        case .carMessage(let name): return name
        }
    }

    static func counterText(_ sent: Sent) -> String {
        if case .command(let counter) = sent { return "counter \(counter)" }
        return "record"
    }
}

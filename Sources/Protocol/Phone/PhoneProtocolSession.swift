// The phone side of protocol v1 as a pure state machine (simulator, tests, reference for app
// developers). It verifies the car before it signs anything.

public struct PhoneProtocolSession: Sendable {
    enum State: Sendable {
        case idle
        case helloSent(hello: Bytes, ephemeral: P256PrivateKey)
        case awaitingAccept(SessionChannel, rangingKey: Bytes)
        case established(Established)
        case closed
    }

    struct Established: Sendable {
        var channel: SessionChannel
        let accepted: SessionAcceptedBody
        let acceptedAtMillis: UInt64
        var pending: CommandCode?
        /// Root of this session's ranging material (section 19); dies with the session.
        let rangingKey: Bytes
        /// What the car's UWB module accepts, once it answered rangingCapabilities.
        var rangingCapabilities: UWBCapabilities?
    }

    public let configuration: PhoneConfiguration
    var state: State = .idle

    public init(configuration: PhoneConfiguration) { self.configuration = configuration }

    public var keyID: KeyID { KeyID(publicKey: configuration.longTermKey.publicKey) }

    /// The SessionAccepted contents once established.
    public var sessionInfo: SessionAcceptedBody? {
        if case .established(let established) = state { return established.accepted }
        return nil
    }

    public var isEstablished: Bool { sessionInfo != nil }

    /// Starts a handshake with a fresh ephemeral key and returns the Hello bytes.
    public mutating func start() throws(PhoneError) -> Bytes {
        let ephemeral: P256PrivateKey
        do { ephemeral = try configuration.ephemeralKeys.makeEphemeralKey() } catch { throw .keyGenerationFailed }
        let hello: HelloMessage
        do throws(MessageFormatError) {
            hello = try HelloMessage(keyID: keyID, ephemeralPublicKey: ephemeral.publicKey.sec1,
                                     shareCertificate: configuration.shareCertificate)
        } catch {
            throw .malformed(error)
        }
        let bytes = hello.encoded()
        state = .helloSent(hello: bytes, ephemeral: ephemeral)
        return bytes
    }

    /// Handles one message from the car. Throwing leaves the state unchanged.
    public mutating func receive(_ bytes: Bytes, now: ProtocolTime) throws(PhoneError) -> PhoneEvent {
        let message: Message
        do throws(MessageFormatError) { message = try Message.decode(bytes) } catch { throw .malformed(error) }
        switch (state, message) {
        case (.helloSent(let hello, let ephemeral), .challenge(let challenge)):
            return try answer(challenge, raw: bytes, hello: hello, ephemeral: ephemeral, now: now)
        case (.helloSent, .fault(let fault)), (.awaitingAccept, .fault(let fault)):
            state = .closed
            return .fault(fault)
        case (.awaitingAccept(var channel, let rangingKey), .encrypted(let record)) where record.type == .sessionAccepted && record.counter == 0:
            let plaintext: Bytes
            do throws(FaultCode) { plaintext = try channel.open(record) } catch { throw PhoneError.from(error) }
            let body: SessionAcceptedBody
            do throws(MessageFormatError) { body = try SessionAcceptedBody.decode(plaintext) } catch { throw .malformed(error) }
            state = .established(Established(channel: channel, accepted: body, acceptedAtMillis: now.monotonicMillis, pending: nil,
                                             rangingKey: rangingKey))
            return .established(body)
        case (.established(var session), .encrypted(let record)) where record.type == .response:
            let plaintext: Bytes
            do throws(FaultCode) { plaintext = try session.channel.open(record) } catch { throw PhoneError.from(error) }
            let body: ResponseBody
            do throws(MessageFormatError) {
                // Only the ok answer to rangingCapabilities is longer than nine bytes (19.2).
                if session.pending == .rangingCapabilities, plaintext.count > ResponseBody.length {
                    let answer = try RangingCapabilitiesAnswer.decode(plaintext)
                    body = answer.response
                    session.rangingCapabilities = answer.capabilities
                } else {
                    body = try ResponseBody.decode(plaintext)
                }
            } catch {
                throw .malformed(error)
            }
            session.pending = nil
            // The car closes the link after these; so do we.
            if let fault = body.fault, [.sessionExpired, .revoked, .expired, .unknownKey].contains(fault) {
                state = .closed
            } else {
                state = .established(session)
            }
            return .response(body)
        default:
            throw .unexpectedMessage("\(Self.describe(message)) in state \(stateName)")
        }
    }

    /// Encrypts `command` with the next counter and an expiry on the car's session clock.
    public mutating func command(_ command: CommandCode, args: Bytes = [], now: ProtocolTime) throws(PhoneError) -> Bytes {
        guard case .established(var session) = state else { throw .notEstablished }
        guard session.pending == nil else { throw .commandPending }
        // Our estimate of the car clock lags the car (it started before SessionAccepted
        // reached us), so the expiry errs on the short side of the car's limit.
        let elapsed = (now.monotonicMillis >= session.acceptedAtMillis ? now.monotonicMillis - session.acceptedAtMillis : 0) / 1000
        let carNow = UInt64(session.accepted.carTime) + elapsed
        let expiresAt = UInt32(clamping: carNow + UInt64(configuration.commandLifetimeSeconds))
        let body: CommandBody
        do throws(MessageFormatError) { body = try CommandBody(command: command, expiresAt: expiresAt, args: args) } catch { throw .malformed(error) }
        let bytes: Bytes
        do throws(FaultCode) { bytes = try session.channel.seal(.command, body.encoded()) } catch { throw .sessionExhausted }
        session.pending = command
        state = .established(session)
        return bytes
    }

    /// Seals any plaintext as a `type` record with the session's next counter, bypassing the
    /// command encoder and the one-pending-command rule: how the `car-session` fuzz target
    /// reaches the car's decoders and policy inside a real session. Package access: no app
    /// built on this library can send what `command` would refuse to build.
    package mutating func sealAnyPlaintext(_ type: MessageType, _ plaintext: Bytes) throws(PhoneError) -> Bytes {
        guard case .established(var session) = state else { throw .notEstablished }
        let bytes: Bytes
        do throws(FaultCode) { bytes = try session.channel.seal(type, plaintext) } catch { throw .sessionExhausted }
        state = .established(session)
        return bytes
    }

    /// Verifies the car, then signs the challenge and derives the session keys.
    private mutating func answer(_ challenge: ChallengeMessage, raw: Bytes, hello: Bytes,
                                 ephemeral: P256PrivateKey, now: ProtocolTime) throws(PhoneError) -> PhoneEvent {
        guard challenge.vehicleID == configuration.vehicleID else { throw .wrongVehicle(challenge.vehicleID.string) }
        do throws(SignedObjectError) { try challenge.verify(with: configuration.carIdentityKey, context: hello) } catch {
            throw .carSignatureInvalid
        }
        guard let carEphemeral = try? P256PublicKey(sec1: challenge.carEphemeralPublicKey) else {
            throw .invalidCarEphemeralKey
        }
        let timestamp = now.wallSeconds32
        let signed = AuthResponseMessage.signedData(challenge: challenge.challenge, timestamp: timestamp)
        let signatureBytes = try signatureField(for: signed)
        let response: AuthResponseMessage
        do throws(MessageFormatError) {
            response = try AuthResponseMessage(challenge: challenge.challenge, timestamp: timestamp, signature: signatureBytes)
        } catch {
            throw .malformed(error)
        }
        let responseBytes = response.encoded()
        let keys: SessionKeys
        do {
            keys = try KeySchedule.deriveKeys(ephemeral: ephemeral, peer: carEphemeral, challenge: challenge.challenge,
                                              hello: hello, challengeMessage: raw, authResponse: responseBytes)
        } catch {
            throw .invalidCarEphemeralKey
        }
        // The ephemeral private key is dropped here: only the derived keys remain.
        state = .awaitingAccept(SessionChannel(keys: keys, isCar: false, nextSendCounter: 1, lastReceivedCounter: nil,
                                               sendLimit: configuration.maxRecordCounter),
                                rangingKey: keys.ranging)
        return .send(responseBytes)
    }

    /// The signature in the configured encoding. A DER signature of exactly 64 bytes would be
    /// read as raw by the car, so it is re-signed (randomized ECDSA gives a new length).
    private func signatureField(for message: Bytes) throws(PhoneError) -> Bytes {
        for _ in 0..<16 {
            guard let signature = try? configuration.longTermKey.signature(for: message) else { throw .signingFailed }
            let bytes = signature.encoded(as: configuration.signatureEncoding)
            if configuration.signatureEncoding == .raw || bytes.count != Wire.rawSignatureLength { return bytes }
        }
        throw .signingFailed
    }

    private var stateName: String {
        switch state {
        case .idle: return "idle"
        case .helloSent: return "helloSent"
        case .awaitingAccept: return "awaitingAccept"
        case .established: return "established"
        case .closed: return "closed"
        }
    }

    private static func describe(_ message: Message) -> String {
        switch message {
        case .hello: return "Hello"
        case .challenge: return "Challenge"
        case .authResponse: return "AuthResponse"
        case .encrypted(let record): return "encrypted type 0x\([record.type.rawValue].hexString) counter \(record.counter)"
        case .fault(let fault): return "Fault \(fault.code)"
        case .pairingHello: return "PairingHello"
        case .pairingChallenge: return "PairingChallenge"
        case .pairingProof: return "PairingProof"
        case .pairingResult: return "PairingResult"
        case .advertisingKeyGrant: return "AdvertisingKeyGrant"
        }
    }
}

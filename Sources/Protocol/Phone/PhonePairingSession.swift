// The phone side of owner enrollment (docs/protocol.md section 18.6) as a pure state machine:
// the SPAKE2+ prover. PairingHello carries shareP; the car's confirmV is checked before the
// phone answers with confirmP and its possession signature; the PairingResult MAC (under
// K_shared) is checked before the car's identity key is pinned. The random is injected.

public struct PhonePairingSession: Sendable {
    enum State: Sendable {
        case idle
        case helloSent(hello: Bytes, x: Bytes, w0: Bytes, w1: Bytes, shareP: Bytes)
        case proofSent(carIdentity: P256PublicKey, vehicleID: VehicleID, expectedCarMAC: Bytes, challenge: Bytes)
        /// Enrolled; an AdvertisingKeyGrant may follow (section 18.12).
        case paired(carIdentity: P256PublicKey, challenge: Bytes)
        case done
    }

    /// What the phone pins after a successful enrollment: build a `PhoneConfiguration` from it.
    public struct Paired: Sendable, Equatable {
        public let carIdentityKey: P256PublicKey
        public let vehicleID: VehicleID
    }

    public enum Event: Sendable, Equatable {
        /// Write these bytes to the car (the PairingProof).
        case send(Bytes)
        /// Enrolled as an owner of this car; the car proved it knows the code.
        case paired(Paired)
        /// The car refused (unauthenticated, like any cleartext fault: advice only), or, with
        /// `wrongPairingCode`, the car's confirmV did not match this code and nothing was sent.
        case refused(UInt16)
    }

    public let longTermKey: any ProtocolSigner
    private let code: PairingCode
    /// When set, a PairingChallenge for another vehicle is refused.
    public let expectedVehicleID: VehicleID?
    /// Draws the SPAKE2+ scalar x (40 bytes, reduced modulo n).
    private let random: any RandomSource
    var state: State = .idle
    /// The PairingHello `start` returned (the possession signature covers it).
    public private(set) var sentHello: Bytes?

    public init(longTermKey: any ProtocolSigner, code: PairingCode, expectedVehicleID: VehicleID? = nil,
                random: any RandomSource = SystemRandom()) {
        self.longTermKey = longTermKey
        self.code = code
        self.expectedVehicleID = expectedVehicleID
        self.random = random
    }

    /// The PairingHello: the phone key and shareP = x*P + w0*M, w0 and w1 from the code.
    public mutating func start() throws(PhoneError) -> Bytes {
        let x: Bytes, w0: Bytes, w1: Bytes, shareP: Bytes
        do {
            (w0, w1) = try PairingSPAKE.scalars(code: code)
            x = try SPAKE2Plus.randomScalar(random)
            shareP = try SPAKE2Plus.proverShare(x: x, w0: w0)
        } catch {
            throw .signingFailed
        }
        let hello: Bytes
        do throws(MessageFormatError) {
            hello = try PairingHelloMessage(phonePublicKey: longTermKey.publicKey.sec1, shareP: shareP).encoded()
        } catch {
            throw .malformed(error)
        }
        state = .helloSent(hello: hello, x: x, w0: w0, w1: w1, shareP: shareP)
        sentHello = hello
        return hello
    }

    public mutating func receive(_ bytes: Bytes) throws(PhoneError) -> Event {
        let message: Message
        do throws(MessageFormatError) { message = try Message.decode(bytes) } catch { throw .malformed(error) }
        switch (state, message) {
        case (.helloSent(let hello, let x, let w0, let w1, let shareP), .pairingChallenge(let challenge)):
            return try answer(challenge, raw: bytes, hello: hello, prover: (x, w0, w1, shareP))
        case (.helloSent, .fault(let fault)), (.proofSent, .fault(let fault)):
            state = .done
            return .refused(fault.code)
        case (.proofSent(let carIdentity, let vehicleID, let expected, let challenge), .pairingResult(let result)):
            state = .done
            guard result.isSuccess else { return .refused(result.result) }
            guard ConstantTime.equals(result.carMAC, expected) else { throw .pairingNotConfirmed }
            state = .paired(carIdentity: carIdentity, challenge: challenge)
            return .paired(Paired(carIdentityKey: carIdentity, vehicleID: vehicleID))
        default:
            throw .unexpectedMessage("pairing message 0x\([bytes.first ?? 0].hexString) out of order")
        }
    }

    /// After `.paired`: opens the car's AdvertisingKeyGrant (section 18.12) with
    /// ECDH(phone long-term key, the car identity key just pinned), salted with this
    /// enrollment's challenge. One grant per enrollment; the session is done afterwards,
    /// whether it opened or not. A car that sends none is an older car: enrolled, no key.
    public mutating func receiveGrant(_ bytes: Bytes) throws(PhoneError) -> AdvertisingKey {
        guard case .paired(let carIdentity, let challenge) = state else {
            throw .unexpectedMessage("AdvertisingKeyGrant before a confirmed PairingResult")
        }
        state = .done
        let message: Message
        do throws(MessageFormatError) { message = try Message.decode(bytes) } catch { throw .malformed(error) }
        guard case .advertisingKeyGrant(let grant) = message else {
            throw .unexpectedMessage("message 0x\([bytes.first ?? 0].hexString) instead of AdvertisingKeyGrant")
        }
        guard let agreement = longTermKey as? any ProtocolKeyAgreement else { throw .keyAgreementUnavailable }
        guard var shared = try? agreement.sharedSecret(with: carIdentity) else { throw .keyAgreementUnavailable }
        defer { ConstantTime.wipe(&shared) }
        guard let key = try? grant.open(sharedSecret: shared, challenge: challenge, carIdentity: carIdentity.sec1,
                                        phone: longTermKey.publicKey.sec1) else { throw .advertisingKeyGrantInvalid }
        return key
    }

    /// Checks that the challenge is signed by the identity key it carries over our own
    /// PairingHello, then finishes SPAKE2+ and checks confirmV (a car, or a man in the middle,
    /// that does not know the code fails here and learns nothing from us); only then sends
    /// confirmP and the possession signature over the whole exchange.
    private mutating func answer(_ challenge: PairingChallengeMessage, raw: Bytes, hello: Bytes,
                                 prover: (x: Bytes, w0: Bytes, w1: Bytes, shareP: Bytes)) throws(PhoneError) -> Event {
        if let expectedVehicleID, challenge.vehicleID != expectedVehicleID { throw .wrongVehicle(challenge.vehicleID.string) }
        guard let carIdentity = try? P256PublicKey(sec1: challenge.carIdentityPublicKey) else { throw .carSignatureInvalid }
        do throws(SignedObjectError) { try challenge.verify(with: carIdentity, context: hello) } catch { throw .carSignatureInvalid }
        let phone = longTermKey.publicKey.sec1, car = carIdentity.sec1
        let ids = PairingSPAKE.identities(phone: phone, car: car, vehicleID: challenge.vehicleID, windowID: challenge.windowID)
        state = .done
        guard let schedule = try? SPAKE2Plus.proverFinish(x: prover.x, w0: prover.w0, w1: prover.w1, shareP: prover.shareP,
                                                          shareV: challenge.shareV, identities: ids) else {
            throw .pairingNotConfirmed // shareV off the curve, the identity, or cancelling w0*N
        }
        // RFC 9383: the prover aborts on a wrong confirmV. Almost always a mistyped code, so
        // it is reported like the car's wrongPairingCode; the car has already counted the guess.
        guard SPAKE2Plus.isValidConfirmation(challenge.confirmV, expected: schedule.confirmV) else {
            return .refused(FaultCode.wrongPairingCode.rawValue)
        }
        let possession = PairingSPAKE.possessionInput(pairingHello: hello, pairingChallenge: raw, confirmP: schedule.confirmP)
        guard let proofSignature = try? longTermKey.signature(for: possession) else { throw .signingFailed }
        let proof: PairingProofMessage
        do throws(MessageFormatError) {
            proof = try PairingProofMessage(confirmP: schedule.confirmP, signature: proofSignature.rawRepresentation)
        } catch {
            throw .malformed(error)
        }
        let expected = PairingSPAKE.resultMAC(kShared: schedule.kShared, phone: phone, car: car, challenge: challenge.challenge)
        state = .proofSent(carIdentity: carIdentity, vehicleID: challenge.vehicleID, expectedCarMAC: expected,
                           challenge: challenge.challenge)
        return .send(proof.encoded())
    }
}

// The phone side of owner enrollment (docs/protocol.md section 18.6) as a pure state machine:
// PairingHello, then prove the code and the key, then check the car's own proof of the code
// before pinning its identity key.

public struct PhonePairingSession: Sendable {
    enum State: Sendable {
        case idle
        case helloSent(hello: Bytes)
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
        /// The car refused (unauthenticated, like any cleartext fault: advice only).
        case refused(UInt16)
    }

    public let longTermKey: any ProtocolSigner
    private let code: PairingCode
    /// When set, a PairingChallenge for another vehicle is refused.
    public let expectedVehicleID: VehicleID?
    var state: State = .idle

    public init(longTermKey: any ProtocolSigner, code: PairingCode, expectedVehicleID: VehicleID? = nil) {
        self.longTermKey = longTermKey
        self.code = code
        self.expectedVehicleID = expectedVehicleID
    }

    public mutating func start() throws(PhoneError) -> Bytes {
        let hello: Bytes
        do throws(MessageFormatError) {
            hello = try PairingHelloMessage(phonePublicKey: longTermKey.publicKey.sec1).encoded()
        } catch {
            throw .malformed(error)
        }
        state = .helloSent(hello: hello)
        return hello
    }

    public mutating func receive(_ bytes: Bytes) throws(PhoneError) -> Event {
        let message: Message
        do throws(MessageFormatError) { message = try Message.decode(bytes) } catch { throw .malformed(error) }
        switch (state, message) {
        case (.helloSent(let hello), .pairingChallenge(let challenge)):
            return try answer(challenge, hello: hello)
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
    /// PairingHello, then MACs with the code and signs for possession.
    private mutating func answer(_ challenge: PairingChallengeMessage, hello: Bytes) throws(PhoneError) -> Event {
        if let expectedVehicleID, challenge.vehicleID != expectedVehicleID { throw .wrongVehicle(challenge.vehicleID.string) }
        guard let carIdentity = try? P256PublicKey(sec1: challenge.carIdentityPublicKey),
              let signature = try? ECDSASignature(rawRepresentation: challenge.signature),
              carIdentity.isValidSignature(signature, for: PairingChallengeMessage.signatureInput(pairingHello: hello, body: challenge.body))
        else { throw .carSignatureInvalid }
        let phone = longTermKey.publicKey.sec1, car = carIdentity.sec1
        let mac = PairingProofs.phoneMAC(code: code, phone: phone, car: car, challenge: challenge.challenge)
        let possession = PairingProofs.possessionInput(phone: phone, car: car, challenge: challenge.challenge)
        guard let proofSignature = try? longTermKey.signature(for: possession) else { throw .signingFailed }
        let proof: PairingProofMessage
        do throws(MessageFormatError) {
            proof = try PairingProofMessage(codeMAC: mac, signature: proofSignature.rawRepresentation)
        } catch {
            throw .malformed(error)
        }
        let expected = PairingProofs.carMAC(code: code, phone: phone, car: car, challenge: challenge.challenge)
        state = .proofSent(carIdentity: carIdentity, vehicleID: challenge.vehicleID, expectedCarMAC: expected,
                           challenge: challenge.challenge)
        return .send(proof.encoded())
    }
}

// The car's side of the service challenge, sans IO: one outstanding challenge at a time, with a
// deadline on the car's monotonic clock; randomness, time and the signer directory come in.
// A challenge is answered once: any answer to it that reaches the time or signature checks
// uses it up, right or wrong, so one challenge is one attempt.

/// An authorisation the gate accepted: who signed, for the event and the console line.
public struct ServiceAuthorised: Sendable, Equatable {
    public let signer: RemoteSigner
    public let challenge: ServiceChallenge
}

public struct ServiceChallengeGate: Sendable {
    /// Nonces answered lately, to tell a replay (`reusedChallenge`) from a stranger's challenge.
    public static let rememberedNonces = 16

    public let vehicleID: VehicleID
    public let lifetimeSeconds: UInt32
    private var outstanding: (challenge: ServiceChallenge, deadlineMillis: UInt64)?
    private var answered: [Bytes] = []

    public init(vehicleID: VehicleID, lifetimeSeconds: UInt32 = ServiceChallenge.defaultLifetimeSeconds) {
        self.vehicleID = vehicleID
        self.lifetimeSeconds = max(1, min(lifetimeSeconds, ServiceChallenge.maxLifetimeSeconds))
    }

    /// The challenge waiting for an answer, while its deadline lasts.
    public func pending(nowMillis: UInt64) -> ServiceChallenge? {
        guard let outstanding, nowMillis < outstanding.deadlineMillis else { return nil }
        return outstanding.challenge
    }

    /// A new challenge replaces any outstanding one (`nonce`: 16 fresh random bytes).
    public mutating func issue(nonce: Bytes, wallSeconds: UInt32, nowMillis: UInt64) throws(MessageFormatError) -> ServiceChallenge {
        let issuedAt = min(wallSeconds, UInt32.max - lifetimeSeconds)
        let challenge = try ServiceChallenge(nonce: nonce, vehicleID: vehicleID, issuedAt: issuedAt,
                                             expiresAt: issuedAt + lifetimeSeconds)
        outstanding = (challenge, nowMillis + UInt64(lifetimeSeconds) * 1000)
        return challenge
    }

    /// Checks in this order; the first failure decides the fault:
    /// 1. decodes strictly: `malformedMessage` (`unsupportedVersion` for another version);
    /// 2. the challenge inside names this car: `wrongVehicle`;
    /// 3. its nonce was answered already: `reusedChallenge`;
    /// 4. it is the outstanding challenge, byte for byte: `unknownChallenge`;
    ///    from here on the outstanding challenge is used up, whatever the outcome;
    /// 5. within its deadline (car's monotonic clock): `challengeExpired`;
    /// 6. the signer is revoked: `revoked`; not known: `unknownKey`;
    /// 7. an owner key with `manage`, or a fleet key: `insufficientPermission` (shares never);
    /// 8. the signature verifies: `badSignature`.
    public mutating func authorise(_ bytes: Bytes, nowMillis: UInt64, signers: any RemoteSignerDirectory,
                                   isRevoked: (KeyID) -> Bool) throws(FaultCode) -> ServiceAuthorised {
        let answer: ServiceAuthorisation
        do throws(MessageFormatError) { answer = try ServiceAuthorisation.decode(bytes) } catch {
            if case .unsupportedVersion = error { throw .unsupportedVersion }
            throw .malformedMessage
        }
        guard answer.challenge.vehicleID == vehicleID else { throw .wrongVehicle }
        guard !answered.contains(answer.challenge.nonce) else { throw .reusedChallenge }
        guard let current = outstanding, current.challenge == answer.challenge else { throw .unknownChallenge }
        outstanding = nil
        remember(current.challenge.nonce)
        guard nowMillis < current.deadlineMillis else { throw .challengeExpired }
        guard !isRevoked(answer.signerKeyID) else { throw .revoked }
        guard let signer = signers.remoteSigner(answer.signerKeyID), signer.keyID == answer.signerKeyID else {
            throw .unknownKey
        }
        switch signer.kind {
        case .owner: guard signer.permissions.contains(.manage) else { throw .insufficientPermission }
        case .fleet: break
        case .share: throw .insufficientPermission
        }
        do throws(SignedObjectError) { try answer.verify(with: signer.publicKey) } catch { throw .badSignature }
        return ServiceAuthorised(signer: signer, challenge: answer.challenge)
    }

    private mutating func remember(_ nonce: Bytes) {
        answered.append(nonce)
        if answered.count > Self.rememberedNonces { answered.removeFirst(answered.count - Self.rememberedNonces) }
    }
}

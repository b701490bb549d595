// What the engine asks its host to do. The engine never performs IO; the agent executes these
// in order.

public enum CarAction: Sendable, Equatable {
    /// Write these bytes to the link's GATT characteristic (or simulated socket).
    case send(LinkID, Bytes)
    /// A phone completed the handshake.
    case authenticated(AccessGrant)
    /// Actuate a command, then call `CarProtocolEngine.complete(_:result:vehicleState:now:)`.
    case perform(CommandRequest)
    /// Append to the event log.
    case audit(AuditRecord)
    /// Disconnect the link; its protocol state is already gone.
    case closeLink(LinkID)
    /// A phone proved the pairing code: enroll its key as an owner (`Keychain.enroll`),
    /// persist it, then call `CarProtocolEngine.completeEnrollment(_:result:now:)`.
    case enroll(EnrollmentRequest)
    /// An owner sent a verified revocation: apply it (`Keychain.apply`), persist, then call
    /// `CarProtocolEngine.complete(_:result:vehicleState:now:)`; on success the engine ends
    /// the affected sessions itself.
    case revoke(RevocationRequest)
    /// A phone set up UWB ranging in its session (command 0x07, already answered ok): run the
    /// responder role (`DSTWRResponder(material: grant.material)`) for this link. A second
    /// grant for the same link replaces the first; stop the old role before starting the new.
    case startRanging(RangingGrant)
    /// The link's session ended (close, expiry, revocation, disconnect) while it was ranging:
    /// stop its role and forget its ranges. Emitted only for links that had a startRanging.
    case stopRanging(LinkID)
}

/// Identifies one accepted command between `.perform` and `complete`.
public struct CommandToken: Hashable, Sendable, CustomStringConvertible {
    public let rawValue: UInt64
    public init(_ rawValue: UInt64) { self.rawValue = rawValue }
    public var description: String { "cmd#\(rawValue)" }
}

public struct CommandRequest: Sendable, Equatable {
    public let token: CommandToken
    public let link: LinkID
    public let keyID: KeyID
    public let command: CommandCode
    public let args: Bytes
}

/// An authenticated session: who, with what rights, until when.
public struct AccessGrant: Sendable, Equatable {
    public let link: LinkID
    public let keyID: KeyID
    public let record: KeyRecord
    /// The share certificate from Hello when the key was not in the directory: the holder has
    /// now proved possession, so the agent may remember the key (issue 4).
    public let presentedCertificate: Bytes?
    public let sessionLifetimeSeconds: UInt16
    /// The AuthResponse timestamp, signed by the key together with the car's fresh challenge.
    /// For an owner key it is a signed time hint for `TrustedClock.observeSignedTimestamp`.
    public let phoneTimestamp: UInt32
}

/// A key that proved the pairing code and possession of its private key. Only the engine makes
/// these, so `Keychain.enroll` cannot be reached without the pairing window.
public struct EnrollmentRequest: Sendable, Equatable {
    public let token: CommandToken
    public let link: LinkID
    public let publicKey: P256PublicKey
    public var keyID: KeyID { KeyID(publicKey: publicKey) }
}

/// A revocation received in an owner's session, already verified by the engine.
public struct RevocationRequest: Sendable, Equatable {
    public let token: CommandToken
    public let link: LinkID
    /// The key of the session that carried it (it may differ from the revocation's issuer).
    public let keyID: KeyID
    public let revocation: VerifiedRevocation
}

// The car's checks on a remote command, sans IO: the caller passes the bytes, who may sign
// (RemoteSignerDirectory), what is revoked and the car's time; the duplicate-UUID check and the
// policy (remote unlock allowed, service mode) need the store and the agent, so they come after.

/// The car's wall time as the checks need it.
public struct RemoteCheckTime: Sendable, Equatable {
    /// Seconds since 1970 (the car's best guess; only believed when `trusted`).
    public let seconds: Int64
    public let trusted: Bool
    /// The persisted trusted-time high-water mark (docs/protocol.md 18.7), if any.
    public let mark: Int64?

    public init(seconds: Int64, trusted: Bool, mark: Int64?) {
        self.seconds = seconds
        self.trusted = trusted
        self.mark = mark
    }
}

/// A command whose signature, signer, vehicle, permissions and time were checked.
public struct VerifiedRemoteCommand: Sendable, Equatable {
    public let command: RemoteCommand
    public let signer: RemoteSigner
}

public enum RemoteCommandVerifier {
    /// A signer's clock may run this far ahead of the car's before a command is "not yet valid".
    public static let clockSkewSeconds: Int64 = 5

    /// Checks in this order; the first failure decides the fault:
    /// 1. decodes strictly: `malformedMessage` (`unsupportedVersion` for another version);
    /// 2. issuedAt < expiresAt <= issuedAt + 60: `lifetimeTooLong`;
    /// 3. the signer is revoked: `revoked`; not known to the directory: `unknownKey`;
    /// 4. the signature verifies with the signer's key: `badSignature`;
    /// 5. names this car: `wrongVehicle`;
    /// 6. the signer holds `remote` and the action's own permission: `insufficientPermission`;
    /// 7. time (trusted clock): before issuedAt - 5 s `notYetValid`, at or after expiresAt
    ///    `expired`. Untrusted clock: the car's time is only known to be at least the mark;
    ///    without a mark `clockNotTrusted`; expiresAt <= mark `expired`; issuedAt later than
    ///    mark + 60 `clockNotTrusted` (the car cannot tell a fresh command from a future one);
    ///    otherwise accepted (its UUID is then kept until the mark passes its expiry).
    public static func verify(_ bytes: Bytes, vehicleID: VehicleID, signers: any RemoteSignerDirectory,
                              isRevoked: (KeyID) -> Bool, time: RemoteCheckTime) throws(FaultCode) -> VerifiedRemoteCommand {
        let command = try decoded { () throws(MessageFormatError) in try RemoteCommand.decode(bytes) }
        guard command.expiresAt > command.issuedAt,
              command.expiresAt - command.issuedAt <= RemoteCommand.maxLifetimeSeconds else { throw .lifetimeTooLong }
        guard !isRevoked(command.signerKeyID) else { throw .revoked }
        guard let signer = signers.remoteSigner(command.signerKeyID), signer.keyID == command.signerKeyID else {
            throw .unknownKey
        }
        do throws(SignedObjectError) { try command.verify(with: signer.publicKey) } catch { throw .badSignature }
        guard command.vehicleID == vehicleID else { throw .wrongVehicle }
        guard signer.permissions.contains(.remote), signer.permissions.contains(command.action.requiredPermission) else {
            throw .insufficientPermission
        }
        try checkTime(command, time)
        return VerifiedRemoteCommand(command: command, signer: signer)
    }

    static func checkTime(_ command: RemoteCommand, _ time: RemoteCheckTime) throws(FaultCode) {
        let issued = Int64(command.issuedAt), expires = Int64(command.expiresAt)
        if time.trusted {
            guard time.seconds + clockSkewSeconds >= issued else { throw .notYetValid }
            guard time.seconds < expires else { throw .expired }
            return
        }
        guard let mark = time.mark else { throw .clockNotTrusted }
        guard expires > mark else { throw .expired }
        guard issued <= mark + Int64(RemoteCommand.maxLifetimeSeconds) else { throw .clockNotTrusted }
    }
}

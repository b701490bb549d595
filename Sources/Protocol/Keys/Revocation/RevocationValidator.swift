// Checks a revocation before anything is revoked: the same rules whether it came over BLE or
// from the cloud. Only a `VerifiedRevocation` can be applied to a Keychain.

/// A revocation whose signature, issuer and vehicle were checked. Only this module makes them.
public struct VerifiedRevocation: Equatable, Sendable {
    public let revocation: Revocation
    /// The bytes as received, kept as evidence in the stored record.
    public let signedBytes: Bytes

    public var target: RevocationTarget { revocation.target }
    public var issuer: KeyID { revocation.issuerKeyID }
}

public enum RevocationValidator {
    /// Checks in this order; the first failure decides the fault:
    /// 1. decodes strictly: `malformedMessage` (`unsupportedVersion` for another version);
    /// 2. names this car: `wrongVehicle`;
    /// 3. the issuer is an enrolled, unrevoked **owner** key, and the signature verifies with
    ///    its enrolled public key over "OCK1-REVOCATION" || body: otherwise `invalidRevocation`.
    /// The issuedAt time is not compared with the car clock: refusing a revocation for a clock
    /// reason would fail open.
    public static func verify(_ bytes: Bytes, vehicleID: VehicleID, keys: any KeyDirectory) throws(FaultCode) -> VerifiedRevocation {
        let revocation = try decoded { () throws(MessageFormatError) in try Revocation.decode(bytes) }
        guard revocation.vehicleID == vehicleID else { throw .wrongVehicle }
        guard let issuer = keys.lookup(revocation.issuerKeyID), issuer.keyID == revocation.issuerKeyID,
              issuer.role == .owner, !issuer.revoked, issuer.permissions.contains(.manage) else {
            throw .invalidRevocation
        }
        do throws(SignedObjectError) { try revocation.verify(with: issuer.publicKey) } catch { throw .invalidRevocation }
        return VerifiedRevocation(revocation: revocation, signedBytes: bytes)
    }
}

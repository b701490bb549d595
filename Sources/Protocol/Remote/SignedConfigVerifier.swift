// Checks a configuration document before the agent looks at its content. Sans-IO: the signer
// directory, the time and the newest version already handled are passed in, so every rule is
// testable with fakes and a fixed clock.

/// A document whose signature, signer, vehicle, lifetime and version were checked.
public struct VerifiedConfig: Equatable, Sendable {
    public let document: SignedConfig
    public let signer: RemoteSigner.Kind
    /// SHA-256 of the document as received: identifies a re-delivery of the same document.
    public let digest: Bytes
}

public enum SignedConfigVerifier {
    /// Accepted clock difference between the signer and the car for `issuedAt`.
    public static let maxClockSkewSeconds: Int64 = 300

    /// Checks in this order; the first failure decides:
    /// 1. strict decoding; 2. names this car; 3. the signer is known now (not revoked) and is a
    /// fleet key or an owner key with `manage` (shares never); 4. the signature over
    /// "OCK1-CONFIG" || body; 5. trusted time, not issued in the future, not expired, lifetime
    /// at most 30 days; 6. newer than `currentVersion`.
    /// Signature before time and version, so an unauthenticated sender learns nothing else.
    public static func verify(_ bytes: Bytes, vehicleID: VehicleID, signers: any RemoteSignerDirectory,
                              now: Int64, timeTrusted: Bool, currentVersion: UInt64) throws(SignedConfigError) -> VerifiedConfig {
        let document: SignedConfig
        do throws(MessageFormatError) { document = try SignedConfig.decode(bytes) } catch { throw .malformed(error) }
        guard document.vehicleID == vehicleID else { throw .wrongVehicle }
        guard let signer = signers.remoteSigner(document.signerKeyID),
              KeyID(publicKey: signer.publicKey) == document.signerKeyID else { throw .unknownSigner }
        switch signer.kind {
        case .fleet: break
        case .owner: guard signer.permissions.contains(.manage) else { throw .insufficientPermission }
        case .share: throw .insufficientPermission
        }
        do throws(SignedObjectError) { try document.verify(with: signer.publicKey) } catch { throw .badSignature }
        guard timeTrusted else { throw .clockNotTrusted }
        guard Int64(document.issuedAt) <= now + maxClockSkewSeconds else { throw .notYetValid }
        guard now < Int64(document.expiresAt) else { throw .expired }
        guard document.expiresAt - document.issuedAt <= SignedConfig.maxLifetimeSeconds else { throw .lifetimeTooLong }
        guard document.version > currentVersion else { throw .notNewer(version: document.version, current: currentVersion) }
        return VerifiedConfig(document: document, signer: signer.kind, digest: SHA256.hash(bytes))
    }
}

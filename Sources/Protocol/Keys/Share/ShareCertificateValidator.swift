// Checks a share certificate presented in Hello against the keychain: the rules of
// docs/protocol.md section 18.3, in the order given there.

public struct ShareCertificatePolicy: Sendable, Equatable {
    /// Longest allowed notAfter - notBefore in seconds; nil = no limit. A certificate with an
    /// open bound (notBefore 0 or notAfter 0xFFFFFFFF) exceeds any limit.
    public var maxValiditySeconds: UInt32?

    public init(maxValiditySeconds: UInt32? = nil) { self.maxValiditySeconds = maxValiditySeconds }
}

public enum ShareCertificateValidator {
    /// Returns the shared-key record the certificate grants, or the fault to report:
    /// 1. decodes strictly: `invalidCertificate` (the Hello itself was well formed);
    /// 2. names this car: `wrongVehicle`;
    /// 3. the holder key is the one named in Hello: `invalidCertificate`;
    /// 4. the issuer is an enrolled **owner** key (a shared key cannot re-share):
    ///    `invalidCertificate`; a revoked issuer: `revoked`;
    /// 5. the signature verifies with the issuer's enrolled key: `invalidCertificate`;
    /// 6. permissions: non-empty, no manage, no undefined bits, and within the issuer's:
    ///    `invalidCertificate` (an escalating certificate is invalid as a whole);
    /// 7. window: notBefore < notAfter and within the policy's maximum: `invalidCertificate`;
    /// 8. neither the serial nor the holder key is revoked: `revoked`;
    /// 9. a free key slot for the car to remember the key: `keychainFull`;
    /// 10. usable now: `clockNotTrusted` on an untrusted clock (shares always have a window
    ///     unless both bounds are open), then `notYetValid` / `expired`.
    public static func verify(_ bytes: Bytes, keyID: KeyID, vehicleID: VehicleID, now: ProtocolTime,
                              keychain: Keychain, policy: ShareCertificatePolicy = .init()) throws(FaultCode) -> KeyRecord {
        let certificate: ShareCertificate
        do throws(MessageFormatError) { certificate = try ShareCertificate.decode(bytes) } catch { throw .invalidCertificate }
        guard certificate.vehicleID == vehicleID else { throw .wrongVehicle }
        guard certificate.holderKeyID == keyID else { throw .invalidCertificate }

        guard let issuer = keychain.lookup(certificate.issuerKeyID), issuer.keyID == certificate.issuerKeyID,
              issuer.role == .owner else { throw .invalidCertificate }
        if issuer.revoked || keychain.isRevoked(.key(certificate.issuerKeyID)) { throw .revoked }
        do throws(SignedObjectError) { try certificate.verify(with: issuer.publicKey) } catch { throw .invalidCertificate }

        let permissions = certificate.permissions
        guard !permissions.isEmpty, Permissions.shareable.isSuperset(of: permissions),
              issuer.permissions.isSuperset(of: permissions) else { throw .invalidCertificate }
        guard certificate.notBefore < certificate.notAfter else { throw .invalidCertificate }
        if let limit = policy.maxValiditySeconds, certificate.notAfter - certificate.notBefore > limit {
            throw .invalidCertificate
        }

        if keychain.isRevoked(.serial(certificate.serial)) || keychain.isRevoked(.key(keyID)) { throw .revoked }
        if let known = keychain.lookup(keyID), known.revoked { throw .revoked }
        guard keychain.hasFreeSlot else { throw .keychainFull }

        let record = KeyRecord(publicKey: certificate.holderPublicKey, role: .shared, permissions: permissions,
                               notBefore: certificate.notBefore, notAfter: certificate.notAfter,
                               share: certificate.provenance)
        try AccessPolicy.checkUsable(record, now: now)
        return record
    }
}

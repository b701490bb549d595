// The hook the keys issue fills in: Hello may carry a share certificate for a key the car does
// not know yet. The engine does not interpret the bytes; it asks the verifier.

public protocol ShareCertificateVerifier: Sendable {
    /// Checks `certificate` (signature by an owner key, holder key ID, vehicle ID, permissions
    /// not above the issuer's, validity, serial not revoked) and returns the record it grants.
    /// Throws the fault to report, usually `.invalidCertificate`, `.revoked` or `.wrongVehicle`.
    /// Must not persist anything: the engine reports the certificate in `AccessGrant` only after
    /// the holder proved possession of the key, and the agent remembers it then.
    func verify(certificate: Bytes, keyID: KeyID, vehicleID: VehicleID, now: ProtocolTime) throws(FaultCode) -> KeyRecord
}

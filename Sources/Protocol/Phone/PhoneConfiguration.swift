// What a phone needs to talk to one car: its own key, the car identity key it pinned at
// enrollment, and the vehicle ID it expects.

public struct PhoneConfiguration: Sendable {
    /// The phone's long-term key (Secure Enclave on a real phone).
    public var longTermKey: any ProtocolSigner
    /// The car identity public key learned at enrollment; Challenges must verify under it.
    public var carIdentityKey: P256PublicKey
    public var vehicleID: VehicleID
    /// How the AuthResponse signature is encoded (the app sends DER; raw is also accepted).
    public var signatureEncoding: SignatureEncoding = .der
    /// A share certificate to present in Hello (empty for enrolled keys).
    public var shareCertificate: Bytes = []
    public var ephemeralKeys: any EphemeralKeySource = SystemEphemeralKeySource()
    /// expiresAt = estimated car time + this. Must stay within the car's limit (30 s).
    public var commandLifetimeSeconds: UInt32 = 10
    /// Highest command counter the phone will use before it needs a new handshake.
    public var maxRecordCounter: UInt64 = 1 << 32

    public init(longTermKey: any ProtocolSigner, carIdentityKey: P256PublicKey, vehicleID: VehicleID) {
        self.longTermKey = longTermKey
        self.carIdentityKey = carIdentityKey
        self.vehicleID = vehicleID
    }
}

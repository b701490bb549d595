// The car engine's tunables, with the defaults docs/protocol.md states.

public struct CarProtocolConfiguration: Sendable, Equatable {
    public var vehicleID: VehicleID
    /// How long an issued challenge may be answered (monotonic).
    public var challengeLifetimeMillis: UInt64 = 10_000
    /// Allowed |AuthResponse timestamp - car wall time| when the car clock is trusted.
    public var timestampToleranceSeconds: Int64 = 60
    /// Session lifetime announced in SessionAccepted and enforced on the monotonic clock.
    public var sessionLifetimeSeconds: UInt16 = 300
    /// Largest allowed expiresAt - carNow for a command.
    public var maxCommandLifetimeSeconds: Int64 = 30
    /// Links with handshake or session state at once; more get `busy` (an owner's Hello ends
    /// the oldest shared-key session instead, rule H1).
    public var maxLinks: Int = 8
    /// How many consumed challenges are remembered to report `reusedChallenge`.
    public var usedChallengeMemory: Int = 256
    /// Peers whose failure history (and handshake budget) is kept.
    public var rateLimitedLinkMemory: Int = 64
    public var rateLimit = RateLimitPolicy()
    /// Handshake work (a Challenge's signature and ephemeral key, then the AuthResponse's
    /// verification and ECDH) per peer, and for the whole car: over budget is `busy`, without
    /// the crypto. Links that already had a Challenge, or whose peer failed, draw on the
    /// car-wide budget only while more than half of it is left (fresh phones go first).
    public var handshakeBudgetPerPeer = HandshakeBudget(perSecond: 2, burst: 4)
    public var handshakeBudgetCarWide = HandshakeBudget(perSecond: 200, burst: 100)
    /// Highest record counter the car will send in one session; then the session ends.
    public var maxRecordCounter: UInt64 = 1 << 32
    /// Owner enrollment: window length and wrong codes allowed.
    public var pairing = PairingPolicy()
    /// The car's advertising key (section 18.12), granted to each newly enrolled owner phone
    /// after its PairingResult. nil: no AdvertisingKeyGrant is sent (a car without BLE privacy).
    public var advertisingKey: AdvertisingKey?
    /// The car's UWB module (section 19). nil: no module, every rangingSetup is answered
    /// `rangingUnsupported`.
    public var uwb: UWBCapabilities?

    public init(vehicleID: VehicleID) { self.vehicleID = vehicleID }
}

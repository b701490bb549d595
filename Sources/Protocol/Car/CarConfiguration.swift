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
    /// Links with handshake or session state at once; more get `busy`.
    public var maxLinks: Int = 8
    /// How many consumed challenges are remembered to report `reusedChallenge`.
    public var usedChallengeMemory: Int = 256
    /// Links whose failure history is kept for rate limiting.
    public var rateLimitedLinkMemory: Int = 64
    public var rateLimit = RateLimitPolicy()
    /// Pre-session failures of all links together. Reconnecting gives a phone a fresh link and
    /// so a clean per-link record; this bound holds across reconnects. More lenient than the
    /// per-link policy because while it blocks, no phone can start a session.
    public var globalRateLimit = RateLimitPolicy(failureThreshold: 20, windowMillis: 60_000,
                                                 basePenaltyMillis: 15_000, maxPenaltyMillis: 300_000)
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

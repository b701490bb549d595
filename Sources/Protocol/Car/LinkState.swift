// Per-link protocol state: a link is idle (no entry), waiting for an AuthResponse, or in a
// session. Ephemeral private keys live only in `PendingHandshake` and die with it.

enum LinkState: Sendable {
    case challenged(PendingHandshake)
    case established(CarSession)
    /// PairingChallenge sent, waiting for PairingProof.
    case pairing(PendingPairing)
    /// Proof accepted; waiting for the agent to enroll the key.
    case enrolling(CommandToken)
}

struct PendingHandshake: Sendable {
    let helloBytes: Bytes
    let keyID: KeyID
    let record: KeyRecord
    /// Set when the record came from a share certificate rather than the directory.
    let certificate: Bytes?
    let phoneEphemeral: P256PublicKey
    let carEphemeral: P256PrivateKey
    let challenge: Bytes
    let challengeBytes: Bytes
    let issuedAtMillis: UInt64
}

struct CarSession: Sendable {
    let keyID: KeyID
    /// Snapshot at handshake; the directory is consulted again for every command.
    let record: KeyRecord
    /// The share certificate from Hello when the key was not in the directory: until the car
    /// remembers the key, this certificate is checked again for every command.
    let certificate: Bytes?
    var channel: SessionChannel
    let establishedAtMillis: UInt64
    let lifetimeMillis: UInt64
    /// carTime sent in SessionAccepted: the session clock's origin.
    let carTimeAtAccept: UInt32
    /// The command handed to the agent and not yet completed (one at a time per session).
    var inFlight: CommandToken?
    /// Root of this session's ranging material; forgotten with the session.
    let rangingKey: Bytes
    /// The ranging session running now (a startRanging was emitted), if any.
    var ranging: RangingSetup?
    /// Every ranging session ID this key session has started: an ID is never reused, so no
    /// STS key and IV counter pair can repeat (bounded by `CarRangingPolicy.maxSetupsPerSession`).
    var usedRangingSessionIDs: [UInt32] = []

    func isExpired(at now: UInt64) -> Bool { now >= establishedAtMillis + lifetimeMillis }

    /// carTime at accept plus monotonic elapsed seconds: works without trusted wall time and
    /// cannot be moved by changing the wall clock.
    func sessionClock(at now: UInt64) -> UInt32 {
        let elapsed = (now >= establishedAtMillis ? now - establishedAtMillis : 0) / 1000
        return UInt32(clamping: UInt64(carTimeAtAccept) + elapsed)
    }
}

struct PendingPairing: Sendable {
    let helloBytes: Bytes
    let phoneKey: P256PublicKey
    let challenge: Bytes
    let issuedAtMillis: UInt64
    /// The SPAKE2+ run this challenge belongs to (CarEngine+Pairing.swift).
    let attempt: PairingAttempt
}

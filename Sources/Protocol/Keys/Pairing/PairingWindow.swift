// The car's pairing window: open for a short time after a physical action, one code, a few
// guesses, used at most once.

public struct PairingPolicy: Sendable, Equatable {
    /// How long a window stays open (monotonic).
    public var windowMillis: UInt64 = 60_000
    /// Wrong codes that close the window.
    public var maxWrongCodes: Int = 5

    public init(windowMillis: UInt64 = 60_000, maxWrongCodes: Int = 5) {
        self.windowMillis = windowMillis
        self.maxWrongCodes = max(1, maxWrongCodes)
    }
}

/// The verifier's side of the code: w0 and L = w1*P, computed when the window opens; the
/// code and w1 are not kept.
struct PairingWindow: Sendable {
    let w0: Bytes
    let l: Bytes
    let windowID: Bytes
    let expiresAtMillis: UInt64
    /// Guesses left. Each PairingChallenge spends one when it is sent (its confirmV lets whoever
    /// chose shareP test one code), so an attempt that is never answered costs one too.
    var wrongCodesLeft: Int

    /// Open for a new PairingHello.
    func isOpen(at now: UInt64) -> Bool { now < expiresAtMillis && wrongCodesLeft > 0 }
    /// Open for the proof of an attempt already charged.
    func acceptsProof(at now: UInt64) -> Bool { now < expiresAtMillis }
}

/// One SPAKE2+ run on a link, between PairingChallenge and PairingProof.
struct PairingAttempt: Sendable {
    let windowID: Bytes
    /// The PairingChallenge as sent (the phone's possession signature covers it).
    let challengeBytes: Bytes
    let expectedConfirmP: Bytes
    let kShared: Bytes
}

/// An enrollment the agent has been asked to carry out, waiting for `completeEnrollment`.
struct PendingEnrollment: Sendable {
    let link: LinkID
    let keyID: KeyID
    /// The MAC of a successful PairingResult, keyed by K_shared; sent on success only.
    let carMAC: Bytes
    /// The AdvertisingKeyGrant for this phone, sent after PairingResult 0 only; nil when the
    /// car has no advertising key (or its identity key cannot do ECDH).
    let grant: Bytes?
}

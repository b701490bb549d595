// The car's pairing window: open for a short time after a physical action, one code, a few
// wrong guesses, used at most once.

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

struct PairingWindow: Sendable {
    let code: PairingCode
    let expiresAtMillis: UInt64
    var wrongCodesLeft: Int

    func isOpen(at now: UInt64) -> Bool { now < expiresAtMillis && wrongCodesLeft > 0 }
}

/// An enrollment the agent has been asked to carry out, waiting for `completeEnrollment`.
struct PendingEnrollment: Sendable {
    let link: LinkID
    let keyID: KeyID
    /// The car's proof of the code, computed before the code was forgotten; sent on success only.
    let carMAC: Bytes
    /// The AdvertisingKeyGrant for this phone, sent after PairingResult 0 only; nil when the
    /// car has no advertising key (or its identity key cannot do ECDH).
    let grant: Bytes?
}

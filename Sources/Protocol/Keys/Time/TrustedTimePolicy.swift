// The numbers of the trusted-time policy (docs/protocol.md section 18.7).

public struct TrustedTimePolicy: Sendable, Equatable {
    /// A synchronised system clock this far or more behind the mark is not believed (someone
    /// set the mark from a bad source, or the NTP answer is forged): time stays untrusted.
    public var systemBehindMarkToleranceSeconds: Int64 = 300
    /// Largest step one signed source may move the mark forward on its own.
    public var maxSingleSourceStepSeconds: Int64 = 7 * 86_400
    /// A larger step needs a second, different source agreeing within this.
    public var corroborationToleranceSeconds: Int64 = 300
    /// How long a pending first observation waits for its corroboration (monotonic).
    public var corroborationWindowMillis: UInt64 = 3_600_000
    /// A signed timestamp this little behind the mark still anchors time (at the mark).
    public var behindMarkToleranceSeconds: Int64 = 60

    public init() {}
}

/// Who vouched for a signed timestamp. The agent validates the signature first: an owner's
/// AuthResponse after a successful handshake (`AccessGrant.phoneTimestamp`), or later a signed
/// fleet message.
public enum TimeSource: Hashable, Sendable, CustomStringConvertible {
    case owner(KeyID)
    case fleet(KeyID)

    public var description: String {
        switch self {
        case .owner(let id): return "owner \(id)"
        case .fleet(let id): return "fleet \(id)"
        }
    }
}

/// What a signed timestamp did.
public enum SignedTimeOutcome: Equatable, Sendable {
    /// Time was untrusted and is now trusted, anchored at `seconds`.
    case anchored(seconds: Int64)
    /// Time was already trusted; signed sources never adjust a trusted clock.
    case alreadyTrusted
    /// Earlier than the mark: the mark never moves back.
    case behindMark
    /// A step larger than one source may make; kept until a different source agrees.
    case awaitingCorroboration
}

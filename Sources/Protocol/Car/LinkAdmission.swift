// Who may make the car do expensive work, and whose failures are whose (rules R0, H1, H2).
// An attacker in radio range can open connections and send Hellos for free; each Challenge
// costs the car an ECDSA signature and an ephemeral key, each AuthResponse a verification and
// an ECDH. Budgets bound that work per peer and car-wide, and a peer's failures stay its own:
// no car-wide record a stranger can fill to lock the owner out.

/// Whose failures and budget a link uses: the peer's radio address when the transport reports
/// one (a phone that reconnects is still the same peer), otherwise the link itself.
public enum PeerKey: Hashable, Sendable {
    case link(LinkID)
    case address(String)
}

/// A token bucket: `perSecond` tokens a second, at most `burst` saved up.
public struct HandshakeBudget: Sendable, Equatable {
    public var perSecond: Int
    public var burst: Int

    public init(perSecond: Int, burst: Int) {
        self.perSecond = max(1, perSecond)
        self.burst = max(1, burst)
    }
}

/// Integer milli-tokens on monotonic milliseconds: no floating point, exact refills.
struct TokenBucket: Sendable {
    private var milliTokens: UInt64
    private(set) var lastRefillMillis: UInt64

    init(_ budget: HandshakeBudget, now: UInt64) {
        milliTokens = UInt64(budget.burst) * 1000
        lastRefillMillis = now
    }

    /// Whole tokens available now (after refilling).
    mutating func available(_ budget: HandshakeBudget, now: UInt64) -> UInt64 {
        if now > lastRefillMillis {
            let gained = (now - lastRefillMillis).multipliedReportingOverflow(by: UInt64(budget.perSecond))
            milliTokens = gained.overflow ? UInt64(budget.burst) * 1000
                                          : min(UInt64(budget.burst) * 1000, milliTokens + gained.partialValue)
            lastRefillMillis = now
        }
        return milliTokens / 1000
    }

    mutating func take() { milliTokens -= min(milliTokens, 1000) }
}

struct LinkAdmission: Sendable {
    let perPeer: HandshakeBudget
    let carWide: HandshakeBudget
    /// Peer buckets remembered; the least recently used is forgotten first.
    let capacity: Int
    private var peers: [LinkID: String] = [:]
    /// Links that were already challenged (or refused) once: not fresh any more.
    private var spentLinks: Set<LinkID> = []
    /// Links that sent a Hello after that: a phone needs one, a flood keeps sending them.
    private var repeatedLinks: Set<LinkID> = []
    private var buckets: [PeerKey: TokenBucket] = [:]
    private var car: TokenBucket?

    init(perPeer: HandshakeBudget, carWide: HandshakeBudget, capacity: Int) {
        self.perPeer = perPeer
        self.carWide = carWide
        self.capacity = max(1, capacity)
    }

    func subject(of link: LinkID) -> PeerKey {
        peers[link].map(PeerKey.address) ?? .link(link)
    }

    /// The transport's peer address for a new link (nil: the link is its own peer).
    mutating func opened(_ link: LinkID, peer: String?) {
        guard let peer, !peer.isEmpty else { return }
        // Bounded by the links the transport holds; a host that never reports closes must not
        // grow it without end.
        if peers.count >= capacity * 4, let any = peers.keys.first { peers.removeValue(forKey: any) }
        peers[link] = peer
    }

    mutating func closed(_ link: LinkID) {
        peers.removeValue(forKey: link)
        spentLinks.remove(link)
        repeatedLinks.remove(link)
    }

    /// A Hello arrived on `link`: one on a link that is not fresh is a repeat.
    mutating func helloArrived(on link: LinkID) {
        guard !isFresh(link) else { return }
        if repeatedLinks.count >= capacity * 4, let any = repeatedLinks.first { repeatedLinks.remove(any) }
        repeatedLinks.insert(link)
    }

    func hasRepeated(_ link: LinkID) -> Bool { repeatedLinks.contains(link) }

    /// Whether this link has already had its handshake work (a Challenge, or a refusal).
    func isFresh(_ link: LinkID) -> Bool { !spentLinks.contains(link) }

    mutating func markSpent(_ link: LinkID) {
        if spentLinks.count >= capacity * 4, let any = spentLinks.first { spentLinks.remove(any) }
        spentLinks.insert(link)
    }

    /// Takes one unit of handshake work for `link`, or refuses (nothing taken). A link that is
    /// not fresh only draws on the car-wide budget while more than half of it is left, so a
    /// flood of repeated Hellos cannot use up what a fresh phone needs.
    mutating func admit(_ link: LinkID, fresh: Bool, now: UInt64) -> Bool {
        let key = subject(of: link)
        var bucket = buckets[key] ?? TokenBucket(perPeer, now: now)
        var shared = car ?? TokenBucket(carWide, now: now)
        let reserve: UInt64 = fresh ? 0 : UInt64(carWide.burst / 2)
        let admitted = bucket.available(perPeer, now: now) >= 1 && shared.available(carWide, now: now) >= 1 + reserve
        if admitted {
            bucket.take()
            shared.take()
        }
        store(bucket, for: key)
        car = shared
        return admitted
    }

    private mutating func store(_ bucket: TokenBucket, for key: PeerKey) {
        if buckets[key] == nil, buckets.count >= capacity,
           let oldest = buckets.min(by: { $0.value.lastRefillMillis < $1.value.lastRefillMillis })?.key {
            buckets.removeValue(forKey: oldest)
        }
        buckets[key] = bucket
    }
}

/// How far a link got, for the transport's choice of which connection to reclaim.
public enum LinkPhase: Sendable, Equatable {
    /// No valid Hello (or PairingHello) yet.
    case idle
    /// Challenged, or pairing: waiting for the phone's answer.
    case handshaking
    /// An owner enrollment the agent is carrying out: not reclaimed.
    case enrolling
    case established
}

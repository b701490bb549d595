// Decides which audit records get a row of their own and which are only counted. A phone that
// holds any valid key (a lock-only share is enough) can open sessions and send `status` in a
// loop, and every round trip would otherwise be a synced row: hundreds of MB an hour. So the
// records that change nothing (sessions opening and closing, status and user-verified
// commands, a refusal identical to one already written) get a budget per key and window;
// beyond it they are counted, and the counts become one summary row when the window ends (or
// the key's entry is evicted, or the agent stops). Nothing is lost silently: every folded
// record is in a count.
//
// Never folded, whatever the budget: the decision to move an actuator (commandAccepted), the
// outcome of one (commandCompleted of unlock, lock, trunk, revoke), enrollment, revocation,
// pairing, and a session ended by a key's revocation or expiry.
//
// `rateLimited` refusals are the generalised form of the older rule: an attacker can produce
// them without limit from fresh links and often without a key, so they share one car-wide
// bucket with a budget of one row per 10 s.
import Protocol

struct AuditCoalescer {
    struct Policy: Equatable {
        let budget: Int
        let windowMillis: UInt64
    }

    /// Per key: enough for a few ordinary visits a minute to stay fully itemised.
    static let keyPolicy = Policy(budget: 24, windowMillis: 60_000)
    static let rateLimitedPolicy = Policy(budget: 1, windowMillis: 10_000)
    /// Keys tracked at once; the least recently seen is evicted (its counts written first), so
    /// the table cannot grow with the number of keys or links an attacker presents.
    static let maxKeys = 64

    enum Verdict: Equatable {
        case write
        /// Counted into the key's (or the car-wide rateLimited) summary instead.
        case fold
    }

    /// What a summary row says: whose records, over which window, how many of each.
    struct Summary: Equatable {
        enum Scope: Equatable {
            /// Noise of one key (nil: records without a key, e.g. a malformed Hello).
            case key(KeyID?)
            /// The car-wide bucket of `rateLimited` refusals.
            case rateLimited
        }
        let scope: Scope
        let counts: FoldedCounts
        let windowMillis: UInt64
    }

    struct FoldedCounts: Equatable {
        var sessionsEstablished = 0
        var sessionsClosed = 0
        /// status and userVerified commands completed.
        var commands = 0
        var refusals = 0
        var total: Int { sessionsEstablished + sessionsClosed + commands + refusals }
    }

    /// One bucket's current window.
    private struct Window {
        var startMillis: UInt64
        var lastSeenMillis: UInt64
        var written = 0
        var folded = FoldedCounts()
        /// Refusal kinds (fault, command) already written in this window: a new kind is always
        /// written, only repeats are folded. Bounded by the fault and command enums.
        var refusalKinds: Set<UInt16> = []
    }

    private let keyPolicy: Policy
    private let rateLimitedPolicy: Policy
    private let maxKeys: Int
    private var keys: [KeyID?: Window] = [:]
    private var rateLimited: Window?

    init(keyPolicy: Policy = Self.keyPolicy, rateLimitedPolicy: Policy = Self.rateLimitedPolicy, maxKeys: Int = Self.maxKeys) {
        self.keyPolicy = keyPolicy
        self.rateLimitedPolicy = rateLimitedPolicy
        self.maxKeys = max(1, maxKeys)
    }

    /// Keys with a window open (for tests of the bound).
    var trackedKeys: Int { keys.count }

    /// Classifies `record`; `summaries` are rows due now (a window that ended, an evicted key),
    /// to be written before the record itself.
    mutating func admit(_ record: AuditRecord) -> (verdict: Verdict, summaries: [Summary]) {
        guard let noise = Self.noise(record) else { return (.write, []) }
        let now = record.monotonicMillis
        if noise == .rateLimited {
            var summaries: [Summary] = []
            var window = roll(rateLimited, policy: rateLimitedPolicy, scope: .rateLimited, now: now, into: &summaries)
            let verdict = charge(&window, noise: noise, kind: nil, policy: rateLimitedPolicy)
            rateLimited = window
            return (verdict, summaries)
        }
        var summaries: [Summary] = []
        let key = record.keyID
        if keys[key] == nil, keys.count >= maxKeys, let oldest = keys.min(by: { $0.value.lastSeenMillis < $1.value.lastSeenMillis }) {
            keys.removeValue(forKey: oldest.key)
            if oldest.value.folded.total > 0 {
                summaries.append(Summary(scope: .key(oldest.key), counts: oldest.value.folded, windowMillis: keyPolicy.windowMillis))
            }
        }
        var window = roll(keys[key], policy: keyPolicy, scope: .key(key), now: now, into: &summaries)
        let kind = noise == .refusal ? UInt16(record.fault?.rawValue ?? 0) << 8 | UInt16(record.command?.rawValue ?? 0) : nil
        let verdict = charge(&window, noise: noise, kind: kind, policy: keyPolicy)
        window.lastSeenMillis = now
        keys[key] = window
        return (verdict, summaries)
    }

    /// Summaries of windows that have ended (every one with `force`, when stopping), and
    /// forgets those windows: call about once a second so a count is never held for long.
    mutating func due(nowMillis: UInt64, force: Bool = false) -> [Summary] {
        var summaries: [Summary] = []
        if let window = rateLimited, force || nowMillis >= window.startMillis + rateLimitedPolicy.windowMillis {
            if window.folded.total > 0 {
                summaries.append(Summary(scope: .rateLimited, counts: window.folded, windowMillis: rateLimitedPolicy.windowMillis))
            }
            rateLimited = nil
        }
        // Sorted so summaries come out in a stable order (tests, and diffs of the log).
        for (key, window) in keys.sorted(by: { $0.value.startMillis < $1.value.startMillis })
        where force || nowMillis >= window.startMillis + keyPolicy.windowMillis {
            if window.folded.total > 0 {
                summaries.append(Summary(scope: .key(key), counts: window.folded, windowMillis: keyPolicy.windowMillis))
            }
            keys.removeValue(forKey: key)
        }
        return summaries
    }

    // MARK: Classification

    private enum Noise: Equatable {
        case established, closed, command, refusal, rateLimited
    }

    /// nil: always written.
    private static func noise(_ record: AuditRecord) -> Noise? {
        switch record.event {
        case .sessionEstablished:
            return .established
        case .sessionClosed:
            // Closed by the phone or by expiry is routine; closed because the key was revoked
            // or ran out is a consequence of a key change and stays itemised.
            return record.fault == nil || record.fault == .sessionExpired ? .closed : nil
        case .commandCompleted:
            guard let command = record.command, !command.movesActuator, command != .revoke else { return nil }
            return .command
        case .rejected:
            return record.fault == .rateLimited ? .rateLimited : .refusal
        case .commandAccepted, .completionDropped, .pairingWindowOpened, .pairingWindowClosed, .ownerEnrolled, .revocationApplied:
            return nil
        }
    }

    // MARK: Windows

    /// The window to charge: `window` while it runs; a fresh one once it has ended (its counts
    /// appended to `summaries`).
    private func roll(_ window: Window?, policy: Policy, scope: Summary.Scope, now: UInt64,
                      into summaries: inout [Summary]) -> Window {
        if let window, now < window.startMillis + policy.windowMillis { return window }
        if let window, window.folded.total > 0 {
            summaries.append(Summary(scope: scope, counts: window.folded, windowMillis: policy.windowMillis))
        }
        return Window(startMillis: now, lastSeenMillis: now)
    }

    private func charge(_ window: inout Window, noise: Noise, kind: UInt16?, policy: Policy) -> Verdict {
        let newKind = kind.map { !window.refusalKinds.contains($0) } ?? false
        guard window.written < policy.budget || newKind else {
            switch noise {
            case .established: window.folded.sessionsEstablished += 1
            case .closed: window.folded.sessionsClosed += 1
            case .command: window.folded.commands += 1
            case .refusal, .rateLimited: window.folded.refusals += 1
            }
            return .fold
        }
        window.written += 1
        if let kind { window.refusalKinds.insert(kind) }
        return .write
    }
}

// How long an event deserves to be kept when the store must make room. One table of rules
// drives both the Swift classification (is this write security-critical?) and the SQL the
// pruner selects with, so the two can never disagree.

public enum EventRetention: Int64, Sendable, CaseIterable, CustomStringConvertible {
    /// Repetitive session noise: sessions opened and closed, status reads. Pruned first.
    case noise = 0
    /// Everything not listed: vehicle state, storage repairs, other refusals.
    case ordinary = 1
    /// Access decisions, tamper findings, keychain changes, actuator faults, service actions,
    /// and the record of pruning itself. Kept longest; writing one may use the reserve.
    case critical = 2

    public var description: String {
        switch self {
        case .noise: return "noise"
        case .ordinary: return "ordinary"
        case .critical: return "critical"
        }
    }

    /// First matching rule wins; no match is `.ordinary`. Kinds and actions are the typed
    /// values the writers use, so a rule cannot name a spelling nobody writes.
    private static let rules: [(kind: EventKind, actions: [EventAction]?, retention: EventRetention)] = [
        (.accessDecision, [.session, .command(.status), .command(.userVerified)], .noise),
        (.accessDecision, nil, .critical),
        (.tamper, nil, .critical),
        (.revocation, nil, .critical),
        (.enrollment, nil, .critical),
        (.share, nil, .critical),
        (.actuatorFault, nil, .critical),
        (.service, nil, .critical),
        (.storage, [.pruneEvents, .diskFull], .critical),
    ]

    public static func of(_ event: NewEvent) -> EventRetention {
        of(kind: event.kind.rawValue, action: event.action)
    }

    static func of(kind: String, action: String) -> EventRetention {
        for rule in rules where rule.kind.rawValue == kind && (rule.actions?.contains { $0.rawValue == action } ?? true) {
            return rule.retention
        }
        return .ordinary
    }

    /// The same rules as an SQL expression over the events table's `kind` and `action`.
    static let sqlExpression: String = {
        let cases = rules.map { rule -> String in
            // Inlined: every word is a constant of this code base, checked here to hold no quote.
            let words = [rule.kind.rawValue] + (rule.actions ?? []).map(\.rawValue)
            precondition(words.allSatisfy { !$0.contains("'") }, "a retention word with a quote")
            let action = rule.actions.map { " AND action IN (" + $0.map { "'\($0.rawValue)'" }.joined(separator: ", ") + ")" } ?? ""
            return "WHEN kind = '\(rule.kind.rawValue)'\(action) THEN \(rule.retention.rawValue)"
        }
        return "(CASE " + cases.joined(separator: " ") + " ELSE \(EventRetention.ordinary.rawValue) END)"
    }()
}

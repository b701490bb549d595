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

    /// First matching rule wins; no match is `.ordinary`. Kinds and actions are constants of
    /// this code base (no quotes), which is what lets `sqlExpression` inline them.
    private static let rules: [(kind: String, actions: [String]?, retention: EventRetention)] = [
        ("access-decision", ["session", "status", "user-verified"], .noise),
        ("access-decision", nil, .critical),
        ("tamper", nil, .critical),
        ("revocation", nil, .critical),
        ("enrollment", nil, .critical),
        ("share", nil, .critical),
        ("actuator-fault", nil, .critical),
        ("service", nil, .critical),
        ("storage", [StoreNotice.pruneAction, StoreNotice.diskFullAction], .critical),
    ]

    public static func of(_ event: NewEvent) -> EventRetention {
        of(kind: event.kind.rawValue, action: event.action)
    }

    static func of(kind: String, action: String) -> EventRetention {
        for rule in rules where rule.kind == kind && (rule.actions?.contains(action) ?? true) { return rule.retention }
        return .ordinary
    }

    /// The same rules as an SQL expression over the events table's `kind` and `action`.
    static let sqlExpression: String = {
        let cases = rules.map { rule -> String in
            let action = rule.actions.map { " AND action IN (" + $0.map { "'\($0)'" }.joined(separator: ", ") + ")" } ?? ""
            return "WHEN kind = '\(rule.kind)'\(action) THEN \(rule.retention.rawValue)"
        }
        return "(CASE " + cases.joined(separator: " ") + " ELSE \(EventRetention.ordinary.rawValue) END)"
    }()
}

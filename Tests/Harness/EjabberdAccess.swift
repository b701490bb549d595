// Topic access rules for the test ejabberd (mod_mqtt access_publish / access_subscribe).
//
// mod_mqtt's semantics, which these mirror: with no rule for a direction everything is allowed;
// otherwise a topic is allowed when ANY rule whose filter matches it allows the client, and
// denied when none does. Within one rule the decisions are tried in order, first match wins
// (so `[.deny(.clientID("X")), .allow(.all)]` is "everyone but X"). In a filter, %c stands
// for the client's own client id (for a car: its vehicle ID) and %u for its user name.
// Topics starting with $ are never publishable.

public struct EjabberdAccess: Sendable, Equatable {
    public enum Who: Sendable, Equatable, Hashable {
        case all
        /// A user registered with `EjabberdCluster.register` (connects with user name and password).
        case user(String)
        /// A client id (a car authenticated by its certificate connects as client id = CN).
        case clientID(String)
    }

    public enum Decision: Sendable, Equatable {
        case allow(Who)
        case deny(Who)
    }

    public struct Rule: Sendable, Equatable {
        public var filter: String
        public var decisions: [Decision]
        public init(_ filter: String, _ decisions: [Decision]) {
            self.filter = filter
            self.decisions = decisions
        }
    }

    public var publish: [Rule]
    public var subscribe: [Rule]

    public init(publish: [Rule] = [], subscribe: [Rule] = []) {
        self.publish = publish
        self.subscribe = subscribe
    }

    /// No restriction at all.
    public static let open = EjabberdAccess()

    /// Each client may publish and subscribe only under vehicles/<its client id>/; the back-end
    /// user may use every topic.
    public static func perClientID(backendUser: String = EjabberdCluster.defaultBackendUser) -> EjabberdAccess {
        EjabberdAccess(publish: [Rule("vehicles/%c/#", [.allow(.all)]), Rule("#", [.allow(.user(backendUser))])],
                       subscribe: [Rule("vehicles/%c/#", [.allow(.all)]), Rule("#", [.allow(.user(backendUser))])])
    }

    /// Every principal the rules name, for the config's acl: section.
    var principals: [Who] {
        var seen: [Who] = []
        for rule in publish + subscribe {
            for decision in rule.decisions {
                let who: Who
                switch decision { case .allow(let w), .deny(let w): who = w }
                if who != .all && !seen.contains(who) { seen.append(who) }
            }
        }
        return seen
    }
}

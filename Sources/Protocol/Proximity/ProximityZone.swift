// Where a key is relative to the car, nearest first, and how a filtered distance moves it
// between zones without flapping at an edge.

public enum ProximityZone: Int, Sendable, CaseIterable, Comparable, CustomStringConvertible {
    case immediate = 0
    case unlock
    case near
    case approaching
    case outOfRange

    public static func < (lhs: ProximityZone, rhs: ProximityZone) -> Bool { lhs.rawValue < rhs.rawValue }

    /// The next zone outwards (out of range stays).
    var farther: ProximityZone { ProximityZone(rawValue: rawValue + 1) ?? .outOfRange }

    public var description: String {
        switch self {
        case .immediate: return "immediate"
        case .unlock: return "unlock"
        case .near: return "near"
        case .approaching: return "approaching"
        case .outOfRange: return "outOfRange"
        }
    }
}

enum ZoneHysteresis {
    /// The zone strictly by edges: the nearest zone whose edge the distance is below.
    static func zone(for distance: Double, configuration: ProximityConfiguration) -> ProximityZone {
        guard !distance.isNaN else { return .outOfRange }
        for zone in ProximityZone.allCases {
            if let edge = configuration.edge(of: zone), distance < edge { return zone }
        }
        return .outOfRange
    }

    /// The zone after `distance`, starting from `current`: moving inwards needs the distance
    /// below the inner zone's edge, moving outwards needs it beyond the current zone's edge
    /// plus the margin, so noise around one edge cannot toggle the zone every round.
    static func next(from current: ProximityZone, distance: Double,
                     configuration: ProximityConfiguration) -> ProximityZone {
        guard !distance.isNaN else { return current }
        var zone = current
        while let edge = configuration.edge(of: zone), distance > edge + configuration.leaveMargin(forEdge: edge) {
            zone = zone.farther
        }
        return min(zone, Self.zone(for: distance, configuration: configuration))
    }
}

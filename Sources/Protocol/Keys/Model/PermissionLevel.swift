// The permission levels an owner picks when sharing, as named sets over `Permissions`.
// Names are stable (CLI arguments, listings): full, unlock-only, trunk-only, lock-only.

public enum PermissionLevel: String, Sendable, CaseIterable, CustomStringConvertible {
    /// Everything a shared key can have: unlock, lock, trunk, remote. Never manage: a shared
    /// key cannot share or revoke.
    case full
    case unlockOnly = "unlock-only"
    case trunkOnly = "trunk-only"
    case lockOnly = "lock-only"

    public var permissions: Permissions {
        switch self {
        case .full: return .shareable
        case .unlockOnly: return .unlock
        case .trunkOnly: return .trunk
        case .lockOnly: return .lock
        }
    }

    public var name: String { rawValue }
    public var description: String { rawValue }

    public init?(name: String) { self.init(rawValue: name) }

    /// The level whose set is exactly `permissions`, or nil for any other combination.
    public init?(permissions: Permissions) {
        guard let match = PermissionLevel.allCases.first(where: { $0.permissions == permissions }) else { return nil }
        self = match
    }

    /// "full, unlock-only, trunk-only or lock-only" for usage messages.
    public static var namesForHelp: String {
        let names = allCases.map(\.rawValue)
        return names.dropLast().joined(separator: ", ") + " or " + names.last!
    }
}

extension Permissions {
    /// The bits defined by protocol v1; others are carried but grant nothing.
    public static let defined: Permissions = .all
    /// What a share may grant at most: everything except manage.
    public static let shareable: Permissions = [.unlock, .lock, .trunk, .remote]
}

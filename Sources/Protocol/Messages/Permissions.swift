// What a key may do, and the role it was enrolled with; both travel in SessionAccepted.

/// Permission bitmask (1 byte). Bits not defined here are carried but grant nothing.
public struct Permissions: OptionSet, Hashable, Sendable, CustomStringConvertible {
    public let rawValue: UInt8
    public init(rawValue: UInt8) { self.rawValue = rawValue }

    public static let unlock = Permissions(rawValue: 0x01)
    public static let lock = Permissions(rawValue: 0x02)
    public static let trunk = Permissions(rawValue: 0x04)
    public static let remote = Permissions(rawValue: 0x08)
    public static let manage = Permissions(rawValue: 0x10)

    /// Everything an owner holds.
    public static let all: Permissions = [.unlock, .lock, .trunk, .remote, .manage]

    public var description: String {
        let names: [(Permissions, String)] = [(.unlock, "unlock"), (.lock, "lock"), (.trunk, "trunk"),
                                              (.remote, "remote"), (.manage, "manage")]
        let set = names.filter { contains($0.0) }.map(\.1)
        return set.isEmpty ? "none" : set.joined(separator: ",")
    }
}

/// How the key got into the car: enrolled by physical presence (owner) or via a share.
public enum KeyRole: UInt8, Sendable, CaseIterable, CustomStringConvertible {
    case owner = 1
    case shared = 2

    public var description: String { self == .owner ? "owner" : "shared" }
}

// The commands a phone can send inside a session, and which permission each one needs.

public enum CommandCode: UInt8, Sendable, CaseIterable, CustomStringConvertible {
    case unlock = 0x01
    case lock = 0x02
    case trunkRelease = 0x03
    case status = 0x04
    /// The phone confirms a biometric check for passive entry; the car's policy decides what
    /// it enables, the protocol only carries it authenticated.
    case userVerified = 0x05
    /// Carries a signed revocation (docs/protocol.md section 18.4) as its arguments; needs the
    /// manage permission, so only owner keys may send it.
    case revoke = 0x06
    /// Starts (or replaces) UWB ranging for this session (docs/protocol.md section 19); its
    /// arguments are a RangingSetup. Any valid key may send it: a range grants nothing by
    /// itself, and a key that may unlock must be able to prove it is near.
    case rangingSetup = 0x07
    /// Asks what the car's UWB module accepts (docs/protocol.md 19.2), so the phone can propose
    /// a setup the car takes. No arguments; the ok Response carries the capabilities after its
    /// nine bytes. Any valid key may send it, like rangingSetup.
    case rangingCapabilities = 0x08

    /// The permission bit required, or nil when any valid key may send it.
    public var requiredPermission: Permissions? {
        switch self {
        case .unlock: return .unlock
        case .lock: return .lock
        case .trunkRelease: return .trunk
        case .revoke: return .manage
        case .status, .userVerified, .rangingSetup, .rangingCapabilities: return nil
        }
    }

    /// True for the commands that drive a lock actuator. Their acceptance is audited before
    /// the engine asks for the actuation (`commandAccepted`), so the decision can be made
    /// durable before anything moves. Revoke changes keys instead (its own audited write);
    /// status, user verified and the two ranging commands change nothing.
    public var movesActuator: Bool {
        switch self {
        case .unlock, .lock, .trunkRelease: return true
        case .status, .userVerified, .revoke, .rangingSetup, .rangingCapabilities: return false
        }
    }

    public var name: String {
        switch self {
        case .unlock: return "unlock"
        case .lock: return "lock"
        case .trunkRelease: return "trunk"
        case .status: return "status"
        case .userVerified: return "userVerified"
        case .revoke: return "revoke"
        case .rangingSetup: return "rangingSetup"
        case .rangingCapabilities: return "rangingCapabilities"
        }
    }

    public var description: String { name }

    public init?(name: String) {
        guard let match = CommandCode.allCases.first(where: { $0.name == name }) else { return nil }
        self = match
    }
}

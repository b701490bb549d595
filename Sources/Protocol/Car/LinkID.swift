// Which BLE connection (or simulated socket) a message came from. The agent chooses the value;
// a stable one per device (e.g. derived from the BLE address) makes rate limiting stronger.

public struct LinkID: Hashable, Sendable, CustomStringConvertible {
    public let rawValue: UInt64
    public init(_ rawValue: UInt64) { self.rawValue = rawValue }
    public var description: String { self == .car ? "car" : "link#\(rawValue)" }

    /// Not a link: the car itself, in audit records of events no phone caused (pairing window).
    /// The agent must not use this value for a connection.
    public static let car = LinkID(.max)
}

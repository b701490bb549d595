// Which BLE connection (or simulated socket) a message came from. The agent chooses the value;
// a stable one per device (e.g. derived from the BLE address) makes rate limiting stronger.

public struct LinkID: Hashable, Sendable, CustomStringConvertible {
    public let rawValue: UInt64
    public init(_ rawValue: UInt64) { self.rawValue = rawValue }
    public var description: String { "link#\(rawValue)" }
}

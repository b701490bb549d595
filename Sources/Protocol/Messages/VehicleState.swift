// The car's physical state as reported in every Response (2-byte big-endian bitfield).

public struct VehicleState: OptionSet, Hashable, Sendable, CustomStringConvertible {
    public let rawValue: UInt16
    public init(rawValue: UInt16) { self.rawValue = rawValue }

    public static let locked = VehicleState(rawValue: 1 << 0)
    public static let driverDoorOpen = VehicleState(rawValue: 1 << 1)
    public static let anyDoorOpen = VehicleState(rawValue: 1 << 2)
    public static let trunkOpen = VehicleState(rawValue: 1 << 3)
    public static let trunkLocked = VehicleState(rawValue: 1 << 4)

    public var description: String {
        let names: [(VehicleState, String)] = [(.locked, "locked"), (.driverDoorOpen, "driverDoorOpen"),
                                               (.anyDoorOpen, "anyDoorOpen"), (.trunkOpen, "trunkOpen"),
                                               (.trunkLocked, "trunkLocked")]
        var set = names.filter { contains($0.0) }.map(\.1)
        let unknown = rawValue & ~0x1F
        if unknown != 0 { set.append("reserved(0x\(String(unknown, radix: 16)))") }
        return set.isEmpty ? "none" : set.joined(separator: ",")
    }

    /// The state in words for people, every lock stated either way, e.g. "unlocked, trunk
    /// locked" or "locked, driver door open, trunk open" (`description` lists the set flags
    /// only, so "unlocked" would be the absence of "locked"). Closed doors are not mentioned.
    public var summary: String {
        var parts = [contains(.locked) ? "locked" : "unlocked"]
        if contains(.driverDoorOpen) {
            parts.append("driver door open")
        } else if contains(.anyDoorOpen) {
            parts.append("a door open")
        }
        if contains(.trunkOpen) {
            parts.append("trunk open")
        } else {
            parts.append(contains(.trunkLocked) ? "trunk locked" : "trunk unlocked")
        }
        let unknown = rawValue & ~0x1F
        if unknown != 0 { parts.append("reserved bits 0x\(String(unknown, radix: 16))") }
        return parts.joined(separator: ", ")
    }
}

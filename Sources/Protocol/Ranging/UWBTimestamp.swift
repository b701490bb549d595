// Time on a UWB chip: the DW3000's 40-bit counter in device time units (DTU). One DTU is
// 1/(128 x 499.2 MHz) = 15.65 ps, i.e. 4.69 mm of radio travel; the counter wraps after 17.2 s,
// so every interval is taken modulo 2^40 (docs/protocol.md, "UWB ranging").

public struct UWBTimestamp: Hashable, Sendable, Comparable, CustomStringConvertible {
    /// The counter width: timestamps and intervals live modulo 2^40.
    public static let bits = 40
    public static let modulus: UInt64 = 1 << 40
    public static let mask: UInt64 = modulus - 1
    /// DTU per second: 128 x 499.2 MHz.
    public static let unitsPerSecond: Double = 63_897_600_000
    /// Metres of radio travel per DTU (speed of light in air is within 0.03 % of vacuum).
    public static let metresPerUnit: Double = 299_792_458 / unitsPerSecond
    /// DTU in one microsecond (63,897.6: Qorvo's examples call 63,898 "UUS", but that is 1 us).
    public static let unitsPerMicrosecond: Double = unitsPerSecond / 1_000_000

    /// The 40-bit value (always below 2^40).
    public let rawValue: UInt64

    public init(_ rawValue: UInt64) { self.rawValue = rawValue & Self.mask }

    /// From the 5 little-endian bytes the chip reports (RX_TIME, TX_TIME).
    public init?(littleEndian bytes: some Collection<UInt8>) {
        guard bytes.count == 5 else { return nil }
        var value: UInt64 = 0
        for (shift, byte) in bytes.enumerated() { value |= UInt64(byte) << (8 * UInt64(shift)) }
        self.init(value)
    }

    /// The 5 little-endian bytes the chip uses.
    public var littleEndianBytes: [UInt8] { (0..<5).map { UInt8(truncatingIfNeeded: rawValue >> (8 * UInt64($0))) } }

    /// `self - earlier` modulo 2^40: correct across one wrap, which is all a ranging round
    /// (milliseconds) can see.
    public func units(since earlier: UWBTimestamp) -> UInt64 { (rawValue &- earlier.rawValue) & Self.mask }

    /// `self + units` modulo 2^40.
    public func adding(units: UInt64) -> UWBTimestamp { UWBTimestamp(rawValue &+ units) }

    public static func < (lhs: UWBTimestamp, rhs: UWBTimestamp) -> Bool { lhs.rawValue < rhs.rawValue }

    public var description: String { "\(rawValue) DTU" }
}

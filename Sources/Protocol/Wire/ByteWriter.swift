// Big-endian appenders for building messages; encoders only run on already-validated values.

extension Array where Element == UInt8 {
    mutating func appendBE(_ value: UInt16) {
        append(UInt8(truncatingIfNeeded: value >> 8))
        append(UInt8(truncatingIfNeeded: value))
    }

    mutating func appendBE(_ value: UInt32) {
        for shift in stride(from: 24, through: 0, by: -8) { append(UInt8(truncatingIfNeeded: value >> UInt32(shift))) }
    }

    mutating func appendBE(_ value: UInt64) {
        for shift in stride(from: 56, through: 0, by: -8) { append(UInt8(truncatingIfNeeded: value >> UInt64(shift))) }
    }

    /// The phone app's AuthResponse timestamp: the one little-endian integer on the wire.
    mutating func appendLE(_ value: UInt32) {
        for shift in stride(from: 0, through: 24, by: 8) { append(UInt8(truncatingIfNeeded: value >> UInt32(shift))) }
    }
}

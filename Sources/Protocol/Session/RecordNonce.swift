// The AES-GCM nonce of a record: direction and counter, never random, so uniqueness is a
// property of the counter rules rather than of luck.

public enum Direction: UInt8, Sendable {
    case phoneToCar = 0x01
    case carToPhone = 0x02
}

public enum RecordNonce {
    /// direction(1) || 00 00 00 || counter(8 BE) = 12 bytes.
    public static func make(direction: Direction, counter: UInt64) -> Bytes {
        var out: Bytes = [direction.rawValue, 0, 0, 0]
        out.appendBE(counter)
        return out
    }
}

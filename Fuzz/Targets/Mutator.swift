// Deterministic mutations for the non-instrumented smoke: a seeded PRNG (SplitMix64) and the
// cheap mutations libFuzzer starts with (bit flips, truncations, insertions, byte sets).
import Protocol

public struct SplitMix64: Sendable {
    private var state: UInt64
    public init(seed: UInt64) { state = seed }
    public mutating func next() -> UInt64 {
        state &+= 0x9E37_79B9_7F4A_7C15
        var z = state
        z = (z ^ (z >> 30)) &* 0xBF58_476D_1CE4_E5B9
        z = (z ^ (z >> 27)) &* 0x94D0_49BB_1331_11EB
        return z ^ (z >> 31)
    }
    public mutating func below(_ n: Int) -> Int { n <= 0 ? 0 : Int(next() % UInt64(n)) }
}

public enum Mutator {
    /// Interesting bytes: boundaries of length and count fields.
    static let interesting: [UInt8] = [0x00, 0x01, 0x02, 0x7F, 0x80, 0xFE, 0xFF, 0x20, 0x40, 0x41, 0x0A, 0x22, 0x5C]

    public static func mutate(_ input: Bytes, _ rng: inout SplitMix64) -> Bytes {
        var out = input
        let rounds = 1 + rng.below(3)
        for _ in 0..<rounds {
            switch rng.below(6) {
            case 0 where !out.isEmpty:
                let i = rng.below(out.count)
                out[i] ^= UInt8(1 << rng.below(8))
            case 1 where !out.isEmpty:
                out.removeLast(1 + rng.below(min(out.count, 8)))
            case 2:
                let i = rng.below(out.count + 1)
                out.insert(interesting[rng.below(interesting.count)], at: i)
            case 3 where !out.isEmpty:
                out[rng.below(out.count)] = interesting[rng.below(interesting.count)]
            case 4 where !out.isEmpty:
                out.remove(at: rng.below(out.count))
            default:
                out.append(UInt8(truncatingIfNeeded: rng.next()))
            }
        }
        return out
    }
}

// Randomness is injected so protocol state machines are deterministic under test.
import COpenSSL

public protocol RandomSource: Sendable {
    /// `count` bytes of randomness. Throws only when the generator itself fails.
    func randomBytes(_ count: Int) throws -> Bytes
}

/// OpenSSL's CSPRNG (RAND_bytes, seeded from the kernel's getrandom).
public struct SystemRandom: RandomSource {
    public init() {}

    public func randomBytes(_ count: Int) throws -> Bytes {
        precondition(count >= 0)
        var out = Bytes(repeating: 0, count: count)
        guard count == 0 || RAND_bytes(&out, Int32(count)) == 1 else { throw OpenSSL.failure("RAND_bytes") }
        return out
    }
}

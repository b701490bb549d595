// The secrets of one ranging session, expanded from the session's ranging key and the exact
// setup bytes: a new session ID (or any other change) gives unrelated STS and frame keys, and
// a ranging key never leaves the key session it was derived in.

public struct RangingMaterial: Sendable, Equatable, CustomStringConvertible, CustomReflectable {
    public static let expandInfo: Bytes = Array("OCK1 uwb-sts".utf8)
    public static let stsKeyLength = 16
    public static let stsIVLength = 16
    public static let frameKeyLength = 32
    /// Rounds are numbered below this, so the IV counter 4 x round fits 32 bits.
    public static let maxRound: UInt32 = 1 << 30
    /// IV counters reserved per round: the Poll, Response and Final each use one (the DW3000
    /// advances the counter after every STS frame), and one is spare.
    public static let countersPerRound: UInt32 = 4

    public let setup: RangingSetup
    /// The 128-bit STS key (AES-128), big-endian as a value: byte 0 holds the top bits.
    let stsKey: Bytes
    /// The 128-bit IV before a round is applied; its low 32 bits (bytes 12...15) are replaced.
    let stsIVBase: Bytes
    /// HMAC-SHA256 key for the UWB frame tags (RangingFrame).
    let frameKey: Bytes

    /// HKDF-Expand(PRK = ranging key, info = "OCK1 uwb-sts" || setup bytes, L = 64): STS key,
    /// IV base, frame key in that order. The ranging key is already a uniform HKDF output, so
    /// no second extract step is needed (RFC 5869 section 3.3).
    public init(rangingKey: Bytes, setup: RangingSetup) {
        precondition(rangingKey.count == KeySchedule.keyLength, "the ranging key is 32 bytes")
        var okm = Self.expand(prk: rangingKey, info: Self.expandInfo + setup.encoded(), length: 64)
        defer { ConstantTime.wipe(&okm) }
        self.setup = setup
        stsKey = Array(okm[0..<16])
        stsIVBase = Array(okm[16..<32])
        frameKey = Array(okm[32..<64])
    }

    /// The IV for `round`: the base with its low 32 bits set to 4 x round (big-endian), the
    /// counter of the round's Poll. Distinct rounds never share a counter.
    func stsIV(round: UInt32) -> Bytes {
        precondition(round < Self.maxRound, "round beyond the IV counter space")
        var iv = stsIVBase
        let counter = round &* Self.countersPerRound
        for index in 0..<4 { iv[12 + index] = UInt8(truncatingIfNeeded: counter >> UInt32(24 - 8 * index)) }
        return iv
    }

    /// RFC 5869 HKDF-Expand with HMAC-SHA256 (length at most 255 x 32).
    static func expand(prk: Bytes, info: Bytes, length: Int) -> Bytes {
        var out: Bytes = []
        var block: Bytes = []
        var counter: UInt8 = 1
        while out.count < length {
            block = HMACSHA256.authenticationCode(key: prk, message: block + info + [counter])
            out += block
            counter += 1
        }
        ConstantTime.wipe(&block)
        return Array(out.prefix(length))
    }

    public static func == (lhs: RangingMaterial, rhs: RangingMaterial) -> Bool {
        lhs.setup == rhs.setup && ConstantTime.equals(lhs.stsKey + lhs.stsIVBase + lhs.frameKey,
                                                      rhs.stsKey + rhs.stsIVBase + rhs.frameKey)
    }

    /// Never the key bytes, not even through `dump` or a debugger's mirror.
    public var description: String { "RangingMaterial(\(setup), keys redacted)" }
    public var customMirror: Mirror { Mirror(self, children: ["setup": setup]) }
}

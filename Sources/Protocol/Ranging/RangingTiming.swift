// The timing rules both roles share: reply times with random jitter, the DW3000's 512-DTU
// delayed-TX granularity, receive windows and the plausibility bounds of a round.

public enum RangingTiming {
    /// A delayed transmission starts at its programmed time with the low 9 bits cleared.
    public static let transmitGranularityUnits: UInt64 = 512
    /// Added to every receive window for the frame's own air time (preamble, SFD, STS and a
    /// short payload are well under 400 us at 6.8 Mb/s) and scheduling slack.
    public static let receiveGuardMicros: UInt32 = 1000
    /// A round whose ToF is outside these bounds is not a range: below -1 m is noise or
    /// tampering, above 300 m cannot be a key that wants in.
    public static let minimumMetres = -1.0
    public static let maximumMetres = 300.0

    /// The time a delayed transmission programmed for `at` really leaves the antenna: rounded
    /// down to 512 DTU, plus the TX antenna delay the chip adds to its TX timestamp.
    public static func actualTransmitTime(programmed at: UWBTimestamp, antennaDelayUnits: UInt16) -> UWBTimestamp {
        UWBTimestamp(at.rawValue & ~(transmitGranularityUnits - 1)).adding(units: UInt64(antennaDelayUnits))
    }

    /// A uniform jitter in [0, bound] DTU from 8 random bytes: the modulo bias is below 2^-35
    /// for any bound the setup allows.
    static func jitterUnits(boundMicros: UInt16, random: any RandomSource) throws -> UInt64 {
        let bound = UInt64(Double(boundMicros) * UWBTimestamp.unitsPerMicrosecond)
        let draw = try random.randomBytes(8).reduce(UInt64(0)) { $0 << 8 | UInt64($1) }
        return draw % (bound + 1)
    }

    /// The base reply delay in DTU.
    static func replyUnits(_ setup: RangingSetup) -> UInt64 {
        UInt64(Double(setup.replyDelayMicros) * UWBTimestamp.unitsPerMicrosecond)
    }

    /// How long to listen for the peer's reply after our own frame: its base delay, its
    /// largest jitter and the guard.
    static func replyWindowMicros(_ setup: RangingSetup) -> UInt32 {
        UInt32(setup.replyDelayMicros) + UInt32(setup.replyJitterMicros) + receiveGuardMicros
    }

    /// Every interval of a round is one reply (at most base + jitter) plus flight: anything
    /// longer than twice the largest reply is not this round.
    static func maxIntervalUnits(_ setup: RangingSetup) -> UInt64 {
        2 * UInt64(Double(replyWindowMicros(setup)) * UWBTimestamp.unitsPerMicrosecond)
    }
}

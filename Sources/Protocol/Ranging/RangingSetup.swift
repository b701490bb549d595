// The arguments of the `rangingSetup` command (0x07): what the phone proposes for one ranging
// session. Every field is bounded here, so a decoded setup is always one both sides can run.
//
//   0      format version (1)
//   1..4   ranging session ID (UInt32 BE, random, not 0)
//   5      channel (5 or 9)
//   6      preamble code (9 to 12)
//   7      STS length in symbols (32, 64 or 128)
//   8..9   round interval (UInt16 BE, ms, 50 to 1000)
//   10..11 reply delay base (UInt16 BE, us, 500 to 10000)
//   12..13 reply jitter bound (UInt16 BE, us, 100 to 5000)
//   14..17 first round (UInt32 BE, at most 2^28 - 1)

public struct RangingSetup: Sendable, Equatable, CustomStringConvertible {
    public static let formatVersion: UInt8 = 1
    public static let encodedLength = 18
    public static let channels: [UInt8] = [5, 9]
    /// The 64 MHz PRF codes of IEEE 802.15.4z BPRF on channels 5 and 9.
    public static let preambleCodes: ClosedRange<UInt8> = 9...12
    public static let stsLengths: [UInt8] = [32, 64, 128]
    public static let roundIntervals: ClosedRange<UInt16> = 50...1000
    public static let replyDelays: ClosedRange<UInt16> = 500...10_000
    /// At least 100 us: time-hopping only helps if the attacker cannot guess the reply time
    /// to within a few symbols; 100 us is ~6.4 million DTU, i.e. 12,000 distinct 512-DTU slots.
    public static let replyJitters: ClosedRange<UInt16> = 100...5000
    /// Leaves 2^28 rounds of head room, so a session can never run out of IV counters
    /// (RangingMaterial.maxRound) whatever round it starts at.
    public static let maxFirstRound: UInt32 = (1 << 28) - 1

    public let sessionID: UInt32
    public let channel: UInt8
    public let preambleCode: UInt8
    public let stsLength: UInt8
    public let roundIntervalMillis: UInt16
    public let replyDelayMicros: UInt16
    public let replyJitterMicros: UInt16
    public let firstRound: UInt32

    public init(sessionID: UInt32, channel: UInt8 = 9, preambleCode: UInt8 = 9, stsLength: UInt8 = 64,
                roundIntervalMillis: UInt16 = 100, replyDelayMicros: UInt16 = 1000, replyJitterMicros: UInt16 = 500,
                firstRound: UInt32 = 1) throws(RangingSetupError) {
        guard sessionID != 0 else { throw .malformed("session ID 0 (it must be random)") }
        guard Self.channels.contains(channel) else { throw .unsupported("channel \(channel)") }
        guard Self.preambleCodes.contains(preambleCode) else { throw .unsupported("preamble code \(preambleCode)") }
        guard Self.stsLengths.contains(stsLength) else { throw .unsupported("STS length \(stsLength)") }
        guard Self.roundIntervals.contains(roundIntervalMillis) else { throw .unsupported("round interval \(roundIntervalMillis) ms") }
        guard Self.replyDelays.contains(replyDelayMicros) else { throw .unsupported("reply delay \(replyDelayMicros) us") }
        guard Self.replyJitters.contains(replyJitterMicros) else { throw .unsupported("reply jitter \(replyJitterMicros) us") }
        guard firstRound <= Self.maxFirstRound else { throw .unsupported("first round \(firstRound)") }
        self.sessionID = sessionID
        self.channel = channel
        self.preambleCode = preambleCode
        self.stsLength = stsLength
        self.roundIntervalMillis = roundIntervalMillis
        self.replyDelayMicros = replyDelayMicros
        self.replyJitterMicros = replyJitterMicros
        self.firstRound = firstRound
    }

    /// A setup with a fresh random session ID (the phone's side). Rejection-samples 0.
    public static func random(using random: any RandomSource, channel: UInt8 = 9, preambleCode: UInt8 = 9,
                              stsLength: UInt8 = 64, roundIntervalMillis: UInt16 = 100,
                              replyDelayMicros: UInt16 = 1000, replyJitterMicros: UInt16 = 500) throws -> RangingSetup {
        for _ in 0..<8 {
            let id = try random.randomBytes(4).reduce(UInt32(0)) { $0 << 8 | UInt32($1) }
            if id != 0 {
                return try RangingSetup(sessionID: id, channel: channel, preambleCode: preambleCode, stsLength: stsLength,
                                        roundIntervalMillis: roundIntervalMillis, replyDelayMicros: replyDelayMicros,
                                        replyJitterMicros: replyJitterMicros, firstRound: 1)
            }
        }
        throw RangingSetupError.malformed("random source returned only zero session IDs")
    }

    public func encoded() -> Bytes {
        var out: Bytes = [Self.formatVersion]
        out.appendBE(sessionID)
        out += [channel, preambleCode, stsLength]
        out.appendBE(roundIntervalMillis)
        out.appendBE(replyDelayMicros)
        out.appendBE(replyJitterMicros)
        out.appendBE(firstRound)
        return out
    }

    /// Exactly 18 bytes; a newer format version is `unsupported` (the car cannot use it), a
    /// wrong length `malformed`.
    public static func decode(_ bytes: Bytes) throws(RangingSetupError) -> RangingSetup {
        guard let version = bytes.first else { throw .malformed("no arguments") }
        guard version == formatVersion else { throw .unsupported("format version \(version)") }
        guard bytes.count == encodedLength else { throw .malformed("\(bytes.count) bytes, expected \(encodedLength)") }
        func u16(_ at: Int) -> UInt16 { UInt16(bytes[at]) << 8 | UInt16(bytes[at + 1]) }
        func u32(_ at: Int) -> UInt32 { bytes[at..<(at + 4)].reduce(UInt32(0)) { $0 << 8 | UInt32($1) } }
        return try RangingSetup(sessionID: u32(1), channel: bytes[5], preambleCode: bytes[6], stsLength: bytes[7],
                                roundIntervalMillis: u16(8), replyDelayMicros: u16(10), replyJitterMicros: u16(12),
                                firstRound: u32(14))
    }

    public var description: String {
        "ranging session \(String(sessionID, radix: 16)): channel \(channel), code \(preambleCode), STS \(stsLength), "
            + "every \(roundIntervalMillis) ms, reply \(replyDelayMicros)+\(replyJitterMicros) us, from round \(firstRound)"
    }
}

/// Why a setup cannot be used. `malformed` is a broken phone; `unsupported` a value this
/// protocol (or this car) cannot range with.
public enum RangingSetupError: Error, Equatable, Sendable, CustomStringConvertible {
    case malformed(String)
    case unsupported(String)

    public var fault: FaultCode {
        switch self {
        case .malformed: return .malformedMessage
        case .unsupported: return .rangingUnsupported
        }
    }

    public var description: String {
        switch self {
        case .malformed(let what): return "malformed ranging setup: \(what)"
        case .unsupported(let what): return "unsupported ranging setup: \(what)"
        }
    }
}

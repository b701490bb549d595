// What the car's UWB module can do. The protocol bounds (RangingSetup) say what any car may be
// asked; these say what this car accepts. A car without a module has none (configuration nil)
// and answers every rangingSetup with `rangingUnsupported`.
//
// The car tells a phone these values in its answer to the rangingCapabilities command (0x08,
// docs/protocol.md 19.2), so the phone proposes a setup the car accepts. On the wire (8 bytes):
//
//   0      format version (1)
//   1      channels: bit 0 channel 5, bit 1 channel 9
//   2      preamble codes: bit 0 code 9, bit 1 code 10, bit 2 code 11, bit 3 code 12
//   3      STS lengths: bit 0 32, bit 1 64, bit 2 128 symbols
//   4..5   shortest reply delay (UInt16 BE, us, 500 to 10000)
//   6..7   shortest round interval (UInt16 BE, ms, 50 to 1000)
//
// Each mask has at least one bit, and no bit beyond those listed.

public struct UWBCapabilities: Sendable, Equatable, CustomStringConvertible {
    public static let formatVersion: UInt8 = 1
    public static let encodedLength = 8

    public var channels: [UInt8] = RangingSetup.channels
    public var preambleCodes: [UInt8] = Array(RangingSetup.preambleCodes)
    public var stsLengths: [UInt8] = RangingSetup.stsLengths
    /// The shortest reply the car can schedule reliably: it must receive the Poll, read its
    /// timestamp and program the delayed Response in that time (a Linux host over SPI needs
    /// far more than a microcontroller).
    public var minReplyDelayMicros: UInt16 = 1000
    /// The most frequent rounds the car will run (radio time is shared by all links).
    public var minRoundIntervalMillis: UInt16 = 50

    public init() {}

    /// Throws `unsupported` for the first value this car cannot use.
    public func check(_ setup: RangingSetup) throws(RangingSetupError) {
        guard channels.contains(setup.channel) else { throw .unsupported("channel \(setup.channel) on this car") }
        guard preambleCodes.contains(setup.preambleCode) else { throw .unsupported("preamble code \(setup.preambleCode) on this car") }
        guard stsLengths.contains(setup.stsLength) else { throw .unsupported("STS length \(setup.stsLength) on this car") }
        guard setup.replyDelayMicros >= minReplyDelayMicros else { throw .unsupported("reply delay below \(minReplyDelayMicros) us") }
        guard setup.roundIntervalMillis >= minRoundIntervalMillis else {
            throw .unsupported("round interval below \(minRoundIntervalMillis) ms")
        }
    }

    // MARK: Wire format

    public func encoded() -> Bytes {
        var out: Bytes = [Self.formatVersion,
                          Self.mask(channels, RangingSetup.channels),
                          Self.mask(preambleCodes, Array(RangingSetup.preambleCodes)),
                          Self.mask(stsLengths, RangingSetup.stsLengths)]
        out.appendBE(minReplyDelayMicros)
        out.appendBE(minRoundIntervalMillis)
        return out
    }

    /// Strict: format 1, exactly 8 bytes, every mask non-empty and within its known bits, the
    /// two minimums within the protocol's ranges (19.2).
    public static func decode(_ bytes: Bytes) throws(MessageFormatError) -> UWBCapabilities {
        var reader = try ByteReader(plaintext: bytes)
        let version = try reader.byte("formatVersion")
        guard version == formatVersion else { throw .unsupportedVersion(version) }
        var capabilities = UWBCapabilities()
        capabilities.channels = try values(try reader.byte("channels"), RangingSetup.channels, "channels")
        capabilities.preambleCodes = try values(try reader.byte("preambleCodes"), Array(RangingSetup.preambleCodes), "preambleCodes")
        capabilities.stsLengths = try values(try reader.byte("stsLengths"), RangingSetup.stsLengths, "stsLengths")
        capabilities.minReplyDelayMicros = try reader.uint16BE("minReplyDelay")
        capabilities.minRoundIntervalMillis = try reader.uint16BE("minRoundInterval")
        try reader.expectEnd()
        guard RangingSetup.replyDelays.contains(capabilities.minReplyDelayMicros) else {
            throw .invalidField(field: "minReplyDelay", reason: "must be \(RangingSetup.replyDelays) us")
        }
        guard RangingSetup.roundIntervals.contains(capabilities.minRoundIntervalMillis) else {
            throw .invalidField(field: "minRoundInterval", reason: "must be \(RangingSetup.roundIntervals) ms")
        }
        return capabilities
    }

    /// Bit i set for the i-th of `known` that `values` holds (values outside `known` are not
    /// representable and are never offered by a car: the board file is checked against them).
    private static func mask(_ values: [UInt8], _ known: [UInt8]) -> UInt8 {
        known.enumerated().reduce(UInt8(0)) { mask, item in values.contains(item.element) ? mask | (1 << UInt8(item.offset)) : mask }
    }

    private static func values(_ mask: UInt8, _ known: [UInt8], _ field: String) throws(MessageFormatError) -> [UInt8] {
        guard mask != 0 else { throw .invalidField(field: field, reason: "no value offered") }
        guard mask >> UInt8(known.count) == 0 else { throw .invalidField(field: field, reason: "unknown bits set") }
        return known.enumerated().filter { mask & (1 << UInt8($0.offset)) != 0 }.map(\.element)
    }

    // MARK: The phone's choice

    /// A setup this car accepts with a fresh random session ID: the protocol's preferred value
    /// of each field when the car offers it (channel 9, preamble code 9, STS 64, the phone's
    /// round interval and 1000 us reply delay), otherwise the first the car offers; the reply
    /// delay and round interval raised to the car's minimums.
    public func proposal(using random: any RandomSource, roundIntervalMillis: UInt16 = 100,
                         replyJitterMicros: UInt16 = 500) throws -> RangingSetup {
        func pick(_ preferred: UInt8, _ offered: [UInt8]) -> UInt8 { offered.contains(preferred) ? preferred : offered.first ?? preferred }
        return try RangingSetup.random(using: random, channel: pick(9, channels), preambleCode: pick(9, preambleCodes),
                                       stsLength: pick(64, stsLengths),
                                       roundIntervalMillis: max(roundIntervalMillis, minRoundIntervalMillis),
                                       replyDelayMicros: max(1000, minReplyDelayMicros), replyJitterMicros: replyJitterMicros)
    }

    public var description: String {
        "channels \(channels.map(String.init).joined(separator: ",")), preamble codes \(preambleCodes.map(String.init).joined(separator: ",")), "
            + "STS \(stsLengths.map(String.init).joined(separator: ",")), reply delay from \(minReplyDelayMicros) us, "
            + "rounds from \(minRoundIntervalMillis) ms"
    }
}
